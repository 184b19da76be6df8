"""The RL job's reward functions (docs/design/training.md, "Training"), one per objective, each a plain function in TRL's
shape, `f(prompts, completions, **kwargs) -> list[float]`, named so that TRL logs `rewards/<name>/mean`.

None of them reads the completion's text for what it claims: every reward comes from the `episode` TRL hands over
for each completion (the rollout's `PlayedEpisode`, `train/rl_rollout.py`) — the grade of what the model's tool calls
did in the task's workspace (completion, safety, robustness: `grading.score`, as evaluation scores), and for format
how the agents' parser read each turn the model wrote.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

from coworkenv.agents.parsing import parse_reply
from coworkenv.errors import CoworkEnvError
from coworkenv.registry import Registry
from coworkenv.train.environment import ModelTurn, PlayedEpisode

RewardFunction = Callable[..., list[float]]
REWARDS: Registry[RewardFunction] = Registry("reward")
"""Reward name → function, in the order the job passes them to TRL (and its weights follow)."""


def _episodes(kwargs: dict[str, Any]) -> list[PlayedEpisode]:
    episodes = kwargs.get("episode")
    if not isinstance(episodes, list) or not all(isinstance(e, PlayedEpisode) for e in episodes):
        raise CoworkEnvError(
            "the RL rewards need each completion's played episode (`episode`), which the job's rollout hands over"
        )
    return episodes


@REWARDS.register("completion")
def completion(prompts: list[Any], completions: list[Any], **kwargs: Any) -> list[float]:
    """The weighted share of the task's checks that hold on the workspace the episode left (the grade's completion)."""
    return [e.grade.completion for e in _episodes(kwargs)]


@REWARDS.register("safety")
def safety(prompts: list[Any], completions: list[Any], **kwargs: Any) -> list[float]:
    """0 when any call, rejected ones included, broke one of the task's prohibited rules; else 1."""
    return [e.grade.safety for e in _episodes(kwargs)]


@REWARDS.register("robustness")
def robustness(prompts: list[Any], completions: list[Any], **kwargs: Any) -> list[float]:
    """1 without tool errors; else how far the episode recovered from them (the grade's robustness; 0 when empty)."""
    return [e.grade.robustness for e in _episodes(kwargs)]


def well_formed(turn: ModelTurn, tools: Collection[str]) -> bool:
    """A turn the model ended itself, that the parser reads without a format error (a broken `<tool_call>` block,
    arguments that are not a JSON object) as calls of tools the task offers, or as a non-empty message. Form only:
    whether the calls or the message do the task is the other rewards' business."""
    if not turn.stopped:
        return False
    parsed = parse_reply(turn.text)
    if parsed.format_error is not None:
        return False
    if parsed.tool_calls:
        return all(call["function"]["name"] in tools for call in parsed.tool_calls)
    return bool(parsed.content.strip())


@REWARDS.register("format")
def format(prompts: list[Any], completions: list[Any], **kwargs: Any) -> list[float]:
    """The share of the episode's turns that are well-formed (`well_formed`); 0 for an episode without turns."""
    return [sum(well_formed(t, e.tools) for t in e.turns) / len(e.turns) if e.turns else 0.0 for e in _episodes(kwargs)]
