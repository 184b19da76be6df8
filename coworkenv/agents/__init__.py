"""Policies that act in episodes (docs/design/agents-and-rollouts.md, "Agents"): `oracle` (the task's own solution), `null` (does
nothing), `random` (random well-formed calls), `hf:<dir>` (a local transformers model), `openai:<model>` (an
OpenAI-compatible endpoint) — agents named by spec strings (`load_agent("hf:models/tiny")`) — and the simulated users."""

from coworkenv.agents import hf, openai_agent, persona, random_agent, scripted  # noqa: F401  (register the agents and the llm user)
from coworkenv.agents.base import AGENTS, Agent, Reply, Request, load_agent, make_policy, parse_agent, reply_of
from coworkenv.agents.users import USERS, make_user

__all__ = [
    "AGENTS",
    "USERS",
    "Agent",
    "Reply",
    "Request",
    "load_agent",
    "make_policy",
    "make_user",
    "parse_agent",
    "reply_of",
]
