"""One trial of a `local` agent (a plain policy object), in whatever process runs it: a sandboxed worker (the `trial`
job) or the caller's own (runtime `none`)."""

from __future__ import annotations

import importlib
import json
import time
from collections.abc import Callable
from typing import Any

from coworkenv.agents.base import AGENTS, Agent, load_agent
from coworkenv.episode.session import BadMessage, EpisodeSession
from coworkenv.rollout.trial_record import TrialRecord, error_text, session_record
from coworkenv.spec.task import TaskSpec

AGENTS_MADE: dict[tuple[str, str], Agent] = {}
"""Agents made in this process, by (spec string, module that registers its kind): one per worker, not per trial."""


def run_local_trial(
    spec: TaskSpec,
    agent: Agent,
    *,
    trial: int,
    seed: int,
    max_turns: int | None = None,
    wall_s: float | None = None,
    user: Callable[[TaskSpec], Any] | None = None,
) -> TrialRecord:
    """The agent's policy plays one episode; whatever goes wrong on the agent's side ends the trial as failed.
    `user`: makes the episode's simulated user (None: the spec's scripted user)."""
    session = EpisodeSession(spec, max_turns=max_turns, wall_s=wall_s, user=None if user is None else user(spec))
    error = None
    try:
        policy = agent.policy(spec, seed=seed)
    except Exception as exc:  # noqa: BLE001 - the agent's fault: the trial fails, the run goes on
        policy, error = None, error_text("agent_error", exc)
    while policy is not None and not session.done:
        start = time.perf_counter()
        try:
            message = policy.act(session.messages, session.tools)
        except MemoryError:  # a sandbox limit, not a bug of the agent's: the worker reports it (`sandbox_memory`)
            raise
        except Exception as exc:  # noqa: BLE001
            error = error_text("agent_error", exc)
            break
        try:
            session.apply(message, latency_s=time.perf_counter() - start)
        except BadMessage as exc:
            error = error_text("bad_output", str(exc))
            break
    return session_record(session, agent=agent.label, model=agent.model, trial=trial, seed=seed, error=error)


def _agent(text: str, module: str | None) -> Agent:
    kind = text.partition(":")[0]
    if module and kind not in AGENTS:
        importlib.import_module(module)  # the module that registers a kind defined outside coworkenv.agents
    key = (text, module or "")
    if key not in AGENTS_MADE:
        AGENTS_MADE[key] = load_agent(text)
    return AGENTS_MADE[key]


def trial_payload(
    spec_json: str,
    agent: str,
    *,
    agent_module: str | None,
    trial: int,
    seed: int,
    max_turns: int | None,
    wall_s: float | None,
) -> str:
    return json.dumps(
        {
            "spec": spec_json,
            "agent": agent,
            "agent_module": agent_module,
            "trial": trial,
            "seed": seed,
            "max_turns": max_turns,
            "wall_s": wall_s,
        }
    )


def trial_from_payload(payload: str) -> dict[str, Any]:
    """`trial_payload(...)` → the trial record as JSON-able data (the `trial` job's work)."""
    request = json.loads(payload)
    spec = TaskSpec.model_validate_json(request["spec"])
    agent = _agent(request["agent"], request.get("agent_module"))
    record = run_local_trial(
        spec,
        agent,
        trial=request["trial"],
        seed=request["seed"],
        max_turns=request.get("max_turns"),
        wall_s=request.get("wall_s"),
    )
    return record.model_dump(mode="json")
