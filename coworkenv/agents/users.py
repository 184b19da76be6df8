"""The simulated users a run can pick (docs/design/agents-and-rollouts.md, "Agents"): name → factory(spec, **options) →
`UserSimulator`. `scripted` (the spec's reveal rules, the default) and `llm` (an LLM persona, `agents.persona`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from coworkenv.episode.user import ScriptedUser, UserSimulator
from coworkenv.registry import Registry
from coworkenv.spec.task import TaskSpec

UserFactory = Callable[..., UserSimulator]

USERS: Registry[UserFactory] = Registry("simulated user")
"""name → factory(spec, *, seed=0, llm=None, **options) → UserSimulator (one per episode)."""


def make_user(name: str, spec: TaskSpec, **options: Any) -> UserSimulator:
    """A fresh simulated user for one episode of `spec`."""
    return USERS.get(name)(spec, **options)


USERS.add("scripted", lambda spec, **_: ScriptedUser(spec.user))
