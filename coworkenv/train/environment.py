"""The environment of one RL rollout (docs/design/training.md, "Training"): a task's workspace, built from its spec, that
the model's raw turns are played in — the same `EpisodeSession` the rollout engine and evaluation drive, so tool
calls go through the workspace's tool layer (allowed tools, argument checks, injected faults, the audit log) and the
scripted user answers messages without tool calls. Each turn's text is read with the agents' parser (`parse_reply`),
as the `hf:` agent reads it at evaluation; the finished episode is graded by `grading.score.grade`.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from coworkenv.agents.parsing import parse_reply
from coworkenv.episode.session import EpisodeSession
from coworkenv.grading.score import Grade, grade
from coworkenv.spec.task import TaskSpec


class ModelTurn(BaseModel):
    """One assistant turn as the model wrote it."""

    model_config = ConfigDict(frozen=True)

    text: str
    """The decoded text (end-of-turn token removed), before parsing."""
    stopped: bool
    """The model ended the turn itself (an end-of-turn token), rather than running out of tokens."""


class PlayedEpisode(BaseModel):
    """A finished rollout: what the model wrote, turn by turn, and the grade of what happened in the workspace."""

    model_config = ConfigDict(frozen=True)

    task_id: str
    tools: tuple[str, ...]
    """The tools the task offers."""
    turns: tuple[ModelTurn, ...]
    grade: Grade
    ending: str
    """`answer` (a final answer), `turns` (the turn or token budget ran out)."""


def _calls_so_far(messages: list[dict[str, Any]]) -> int:
    return sum(len(m.get("tool_calls") or ()) for m in messages)


class TaskEnvironment:
    """One task's workspace for one rollout, advanced by `step(text)` until `done`; then `outcome()`.

    `prompt`: the opening messages the model was given (an `rl` row's), which the conversation continues; default the
    episode's own (`initial_messages`)."""

    def __init__(self, spec: TaskSpec, *, max_turns: int, prompt: list[dict[str, Any]] | None = None):
        self.spec = spec
        self.session = EpisodeSession(spec, max_turns=max_turns)
        if prompt is not None:
            self.session.messages = [dict(m) for m in prompt]
        self.turns: list[ModelTurn] = []

    @property
    def done(self) -> bool:
        return self.session.done

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.session.messages

    @property
    def tools(self) -> list[dict[str, Any]]:
        return self.session.tools

    def step(self, text: str, *, stopped: bool = True) -> list[dict[str, Any]]:
        """Play one assistant turn written as `text`: its tool calls run in the workspace, or its text goes to the user.
        Returns the messages the environment answered with (tool results, the user's reply; none when it ended)."""
        parsed = parse_reply(text, first_id=_calls_so_far(self.session.messages) + 1)
        before = len(self.session.messages)
        self.session.apply(parsed.message(), format_error=parsed.format_error)
        self.turns.append(ModelTurn(text=text, stopped=stopped))
        return self.session.messages[before + 1 :]

    def stop(self) -> None:
        """End the episode where it is (the completion's token budget ran out)."""
        self.session.stop("turns")

    def outcome(self) -> PlayedEpisode:
        """The finished episode and its grade (an episode stopped early is graded by replay, its last message the answer)."""
        self.stop()
        evidence = self.session.evidence()
        return PlayedEpisode(
            task_id=self.spec.id,
            tools=tuple(self.spec.tools),
            turns=tuple(self.turns),
            grade=grade(self.spec, evidence),
            ending=self.session.ending or "turns",
        )
