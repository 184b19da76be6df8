"""Policies that act in episodes (docs/architecture.md, "Agents"): `oracle` (the task's own solution), `null` (does
nothing), `random` (random well-formed calls), and the agents named by spec strings (`load_agent("hf:models/tiny")`)."""

from coworkenv.agents import random_agent, scripted  # noqa: F401  (register oracle, null and random)
from coworkenv.agents.base import AGENTS, Agent, Reply, Request, load_agent, parse_agent, reply_of
from coworkenv.agents.registry import POLICIES, make_policy

__all__ = ["AGENTS", "POLICIES", "Agent", "Reply", "Request", "load_agent", "make_policy", "parse_agent", "reply_of"]
