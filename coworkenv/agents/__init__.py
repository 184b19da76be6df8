"""Policies that act in episodes: `oracle` (the task's own solution) and `null` (does nothing)."""

from coworkenv.agents import scripted  # noqa: F401  (registers oracle and null)
from coworkenv.agents.registry import POLICIES, make_policy

__all__ = ["POLICIES", "make_policy"]
