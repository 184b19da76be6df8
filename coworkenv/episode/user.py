"""The scripted simulated user of multi-turn tasks (`user` in docs/architecture.md, "TaskSpec")."""

from __future__ import annotations

from coworkenv.spec.task import UserSpec


def scripted_reply(user: UserSpec | None, text: str, rounds_used: int) -> str | None:
    """The user's answer to an assistant message, or None when no rule fires or no rounds remain."""
    if user is None or rounds_used >= user.max_rounds:
        return None
    lowered = text.lower()
    for rule in user.reveal:
        if any(keyword.lower() in lowered for keyword in rule.when_any):
            return rule.say
    return None
