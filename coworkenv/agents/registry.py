"""The policy registry: name → factory(spec, **options) → Policy."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from coworkenv.episode.runner import Policy
from coworkenv.registry import Registry
from coworkenv.spec.task import TaskSpec

PolicyFactory = Callable[..., Policy]

POLICIES: Registry[PolicyFactory] = Registry("agent")


def make_policy(name: str, spec: TaskSpec, **options: Any) -> Policy:
    return POLICIES.get(name)(spec, **options)
