"""A live episode advanced one assistant turn at a time (docs/design/agents-and-rollouts.md, "Rollouts").

`EpisodeSession` owns the `Episode` and the conversation: whoever produces assistant messages (a policy in
`run_episode`, a batch of model replies, an awaited endpoint) hands each one to `apply`, and `finish` turns what
happened into the trajectory and its evidence. It also keeps the trace the rollout engine stores: per turn the
agent's latency, tokens and format error, per call the tool, its arguments, how it ended and how long it took.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any, Literal

from coworkenv.episode.episode import Episode, EpisodeFinished
from coworkenv.episode.evidence import Evidence
from coworkenv.episode.trajectory import Trajectory, replay
from coworkenv.spec.task import TaskSpec

DEFAULT_MAX_TURNS = 64
RETRIES_PER_STEP = 20
"""How often a policy may retry a call that failed with an injected fault; sizes the turn budget."""

SYSTEM_PROMPT = (
    "You are a coworker agent acting for {name} <{email}> inside their workspace. The current time is {now}. "
    "Use the tools to do what the user asks. If you need information only the user has, ask them. "
    "When you are done, reply with a short final answer and no tool calls."
)

Ending = Literal["answer", "turns", "wall", "context"]
"""How an episode ended: its final answer, its turn budget, its time limit, or the model's context (no room left for
another turn: graded as it stands, like a spent turn budget)."""
Clock = Literal["wall", "own"]
"""What an episode's time limit counts: `wall`, the wall clock since the session started; `own`, only the episode's own
work (see `EpisodeSession`)."""

_RESULT_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
"""`json.dumps(result, ensure_ascii=False)` without building an encoder for every tool result; compact, since tool
results are most of a conversation's tokens (12% fewer with a 49k-token BPE)."""


class BadMessage(ValueError):
    """An assistant message that is not one: the agent's fault (the rollout engine fails the trial with it)."""


def initial_messages(spec: TaskSpec) -> list[dict[str, Any]]:
    me = spec.workspace.me
    system = SYSTEM_PROMPT.format(name=me.name, email=me.email, now=spec.workspace.now)
    return [{"role": "system", "content": system}, {"role": "user", "content": spec.instruction}]


def turn_budget(spec: TaskSpec) -> int:
    """Enough assistant turns for the task's solution even if every step is retried on injected faults."""
    return max(DEFAULT_MAX_TURNS, (len(spec.solution) + 2) * (RETRIES_PER_STEP + 1))


@dataclass(slots=True)
class TurnTrace:
    """One assistant turn as the engine saw it. A dataclass, not a model: one per turn on the hot path."""

    latency_s: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    format_error: str | None = None
    calls: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "latency_s": self.latency_s,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "format_error": self.format_error,
            "calls": self.calls,
        }


def _calls_of(message: Any) -> list[tuple[str, Any, Any]]:
    """(id, name, arguments) of each tool call; BadMessage when the message is not an assistant message."""
    if not isinstance(message, dict) or message.get("role") != "assistant":
        raise BadMessage("an assistant turn must be a dict with role 'assistant'")
    content = message.get("content")
    if content is not None and not isinstance(content, str | list):
        raise BadMessage(f"assistant content must be text, got {type(content).__name__}")
    calls = message.get("tool_calls") or []
    if not isinstance(calls, list):
        raise BadMessage("tool_calls must be a list")
    out = []
    for call in calls:
        function = call.get("function") if isinstance(call, dict) else None
        if (
            not isinstance(function, dict)
            or not isinstance(call.get("id"), str)
            or not isinstance(function.get("name"), str)
        ):
            raise BadMessage("each tool call needs an 'id' and a 'function' with a 'name'")
        out.append((call["id"], function["name"], function.get("arguments", "{}")))
    return out


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content or ""


class EpisodeSession:
    """One task's episode, advanced by `apply(message)` until `done`; then `finish()`.

    The episode ends on the final answer (an assistant message without tool calls that the user does not answer),
    after `max_turns` assistant turns (default: `turn_budget(spec)`), or at the first turn that ends past its time
    limit of `wall_s` seconds (`ending` says which). `clock` says what the limit counts (`used()`): `wall`, the wall
    clock since the session started (an episode that runs on its own: a policy in a process, an awaited endpoint);
    `own`, the episode's own time (`spent`): each turn's `latency_s` as its producer reports it, plus what `apply`
    itself takes (the tool calls, the simulated user's reply), and not the time it spends waiting while other
    episodes' turns are produced or applied (the lock-step batches of a local model). `user`: a simulated user for
    `Episode` (None: the spec's scripted user).
    """

    def __init__(
        self,
        spec: TaskSpec,
        *,
        max_turns: int | None = None,
        wall_s: float | None = None,
        user: Any = None,
        clock: Clock = "wall",
    ):
        if clock not in ("wall", "own"):
            raise ValueError(f"unknown clock {clock!r}: 'wall' or 'own'")
        self.spec = spec
        self.max_turns = turn_budget(spec) if max_turns is None else max_turns
        self.wall_s = wall_s
        self.clock: Clock = clock
        self.spent = 0.0
        """Seconds of the episode's own work so far: the turns' reported latencies plus the time `apply` took."""
        self.episode = Episode(spec) if user is None else Episode(spec, user=user)
        self.messages: list[dict[str, Any]] = initial_messages(spec)
        self.tools: list[dict[str, Any]] = spec.tool_schemas
        self.turns: list[TurnTrace] = []
        self.ending: Ending | None = None
        self.started = time.monotonic()
        if self.max_turns < 1:
            self.ending = "turns"

    @property
    def done(self) -> bool:
        return self.ending is not None

    @property
    def n_turns(self) -> int:
        return len(self.turns)

    def elapsed(self) -> float:
        """Wall-clock seconds since the session started (the trial's `wall_s`, whatever the clock)."""
        return time.monotonic() - self.started

    def used(self) -> float:
        """The seconds the time limit counts: `elapsed()` on the `wall` clock, `spent` on the `own` clock."""
        return self.spent if self.clock == "own" else self.elapsed()

    def apply(
        self,
        message: dict[str, Any],
        *,
        latency_s: float = 0.0,
        prompt_tokens: int = 0,
        completion_tokens: int = 0,
        format_error: str | None = None,
    ) -> None:
        """One assistant turn: run its tool calls in order (each timed), or hand its text to the user.

        The keyword arguments are what producing the message cost, kept in the turn's trace (and `latency_s` in
        `spent`). A message that is not an assistant message raises BadMessage and changes nothing."""
        if self.done:
            raise EpisodeFinished(f"episode for task {self.spec.id!r} has finished")
        begun = time.perf_counter()
        calls = _calls_of(message)
        turn = TurnTrace(latency_s, prompt_tokens, completion_tokens, format_error)
        self.turns.append(turn)
        self.messages.append(message)
        audit = self.episode.workspace.audit
        if calls:
            self.episode.narrate(_text(message.get("content")))
        for call_id, name, arguments in calls:
            start = time.perf_counter()
            result = self.episode.step(name, arguments)
            latency = time.perf_counter() - start
            self.messages.append({"role": "tool", "tool_call_id": call_id, "content": _RESULT_JSON(result)})
            entry = audit[-1]
            turn.calls.append(
                {
                    "tool": name,
                    "arguments": entry.args if entry.args is not None else arguments,
                    "status": entry.status,
                    "code": entry.code,
                    "latency_s": latency,
                }
            )
        if not calls:
            reply = self.episode.message(_text(message.get("content")))
            if reply is None:
                self.spent += max(latency_s, 0.0) + (time.perf_counter() - begun)
                self.ending = "answer"
                return
            self.messages.append({"role": "user", "content": reply})
        self.spent += max(latency_s, 0.0) + (time.perf_counter() - begun)
        if len(self.turns) >= self.max_turns:
            self.ending = "turns"
        elif self.wall_s is not None and self.used() > self.wall_s:
            self.ending = "wall"

    def stop(self, ending: Ending = "wall") -> None:
        """End the episode early (the engine's wall clock ran out while the agent was thinking)."""
        if self.ending is None:
            self.ending = ending

    def trace(self) -> list[dict[str, Any]]:
        return [t.to_dict() for t in self.turns]

    def trajectory(self) -> Trajectory:
        """The conversation so far as a validated trajectory."""
        return Trajectory.model_validate({"task_id": self.spec.id, "messages": self.messages})

    def evidence(self) -> Evidence:
        """`finish()`'s evidence alone: an episode that ended on its answer needs no trajectory model, and validating
        every message costs a good share of a short scripted episode."""
        if not self.episode.done:
            return replay(self.spec, self.trajectory())
        return self.episode.evidence

    def finish(self) -> tuple[Trajectory, Evidence]:
        """The trajectory and its evidence. An episode that did not end on its final answer is graded the only way a
        stored trajectory can be: by replay, where the last assistant message is the answer."""
        trajectory = self.trajectory()
        if not self.episode.done:
            return trajectory, replay(self.spec, trajectory)
        return trajectory, self.episode.evidence
