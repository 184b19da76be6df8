"""Run a policy through a live episode, producing the trajectory and its evidence."""

from __future__ import annotations

import json
from typing import Any, Protocol

from coworkenv.episode.episode import Episode
from coworkenv.episode.evidence import Evidence
from coworkenv.episode.trajectory import Trajectory, replay
from coworkenv.spec.task import TaskSpec
from coworkenv.workspace.tools import tool_schemas

DEFAULT_MAX_TURNS = 64
RETRIES_PER_STEP = 20
"""How often a policy may retry a call that failed with an injected fault; sizes the turn budget."""

SYSTEM_PROMPT = (
    "You are a coworker agent acting for {name} <{email}> inside their workspace. The current time is {now}. "
    "Use the tools to do what the user asks. If you need information only the user has, ask them. "
    "When you are done, reply with a short final answer and no tool calls."
)


class Policy(Protocol):
    """Anything that, given the conversation so far and the tool schemas, produces the next assistant message."""

    def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]: ...


def initial_messages(spec: TaskSpec) -> list[dict[str, Any]]:
    me = spec.workspace.me
    system = SYSTEM_PROMPT.format(name=me.name, email=me.email, now=spec.workspace.now)
    return [{"role": "system", "content": system}, {"role": "user", "content": spec.instruction}]


def turn_budget(spec: TaskSpec) -> int:
    """Enough assistant turns for the task's solution even if every step is retried on injected faults."""
    return max(DEFAULT_MAX_TURNS, (len(spec.solution) + 2) * (RETRIES_PER_STEP + 1))


def run_episode(spec: TaskSpec, policy: Policy, *, max_turns: int | None = None) -> tuple[Trajectory, Evidence]:
    max_turns = turn_budget(spec) if max_turns is None else max_turns
    episode = Episode(spec)
    messages = initial_messages(spec)
    tools = tool_schemas(spec.tools)
    for _ in range(max_turns):
        message = policy.act(messages, tools)
        messages.append(message)
        calls = message.get("tool_calls") or []
        for call in calls:
            result = episode.step(call["function"]["name"], call["function"]["arguments"])
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": json.dumps(result, ensure_ascii=False)})
        if calls:
            continue
        reply = episode.message(message.get("content") or "")
        if reply is None:
            break
        messages.append({"role": "user", "content": reply})
    trajectory = Trajectory.model_validate({"task_id": spec.id, "messages": messages})
    if not episode.done:
        # Out of turns: the trajectory has no final answer of its own. Grade it the only way a stored
        # trajectory can be graded — by replay, where the last assistant message is the answer.
        return trajectory, replay(spec, trajectory)
    return trajectory, episode.evidence
