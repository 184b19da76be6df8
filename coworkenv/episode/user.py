"""Simulated users of multi-turn tasks (`user` in docs/design/contracts.md, "TaskSpec"; docs/design/agents-and-rollouts.md, "Agents").

A live episode hands every assistant message without tool calls to its `UserSimulator`; the reply (or None: no
reply, the message is the final answer) goes back to the agent. The scripted user answers by the spec's reveal
rules; an LLM persona (`coworkenv.agents.persona`) plays the spec's persona. Grading never depends on the simulator:
replay (`episode.replay`) always uses the scripted user, only to count rounds.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from coworkenv.spec.task import UserSpec


@runtime_checkable
class UserSimulator(Protocol):
    errors: list[str]
    """Simulator failures (an endpoint error, a refusal, a leaked fact), kept apart from the agent's errors."""

    def reply(self, text: str, rounds_used: int) -> str | None:
        """The user's answer to an assistant message, or None when the user does not answer."""
        ...


def scripted_reply(user: UserSpec | None, text: str, rounds_used: int) -> str | None:
    """The user's answer to an assistant message, or None when no rule fires or no rounds remain."""
    if user is None or rounds_used >= user.max_rounds:
        return None
    lowered = text.lower()
    for rule in user.reveal:
        if any(keyword.lower() in lowered for keyword in rule.when_any):
            return rule.say
    return None


class ScriptedUser:
    """The spec's reveal rules: the first rule with a keyword in the message answers, while rounds remain."""

    def __init__(self, user: UserSpec | None):
        self.user = user
        self.errors: list[str] = []

    def reply(self, text: str, rounds_used: int) -> str | None:
        return scripted_reply(self.user, text, rounds_used)
