"""Run a policy through a live episode, producing the trajectory and its evidence."""

from __future__ import annotations

from typing import Any, Protocol

from coworkenv.episode.evidence import Evidence
from coworkenv.episode.session import (
    DEFAULT_MAX_TURNS,
    RETRIES_PER_STEP,
    SYSTEM_PROMPT,
    EpisodeSession,
    initial_messages,
    turn_budget,
)
from coworkenv.episode.trajectory import Trajectory
from coworkenv.spec.task import TaskSpec

__all__ = [
    "DEFAULT_MAX_TURNS",
    "RETRIES_PER_STEP",
    "SYSTEM_PROMPT",
    "Policy",
    "initial_messages",
    "played",
    "run_episode",
    "turn_budget",
]


class Policy(Protocol):
    """Anything that, given the conversation so far and the tool schemas, produces the next assistant message."""

    def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]: ...


def played(spec: TaskSpec, policy: Policy, *, max_turns: int | None = None, user: Any = None) -> EpisodeSession:
    """The policy plays the task to its final answer or `max_turns` (default: `turn_budget(spec)`); the ended session."""
    session = EpisodeSession(spec, max_turns=max_turns, user=user)
    while not session.done:
        session.apply(policy.act(session.messages, session.tools))
    return session


def run_episode(
    spec: TaskSpec, policy: Policy, *, max_turns: int | None = None, user: Any = None
) -> tuple[Trajectory, Evidence]:
    """`played(...).finish()`: the trajectory and its evidence."""
    return played(spec, policy, max_turns=max_turns, user=user).finish()
