"""Fixtures of the training tests."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest


def turn_text(message: dict[str, Any]) -> str:
    """An assistant message as a model writes it under the tiny model's chat template: its text, then one
    `<tool_call>{"name": ..., "arguments": ...}</tool_call>` per call, a newline between them."""
    parts = [message["content"]] if message.get("content") else []
    for call in message.get("tool_calls") or ():
        function = call["function"]
        parts.append(
            f'<tool_call>{{"name": {json.dumps(function["name"])}, "arguments": {function["arguments"]}}}</tool_call>'
        )
    return "\n".join(parts)


@pytest.fixture(scope="session")
def oracle_turns() -> Callable[[Any], list[str]]:
    """spec → the oracle's assistant turns, played live (retries of injected faults, questions to the user
    included), each as the text a model would write for it."""
    from coworkenv.agents import make_policy
    from coworkenv.episode.runner import run_episode

    def turns(spec: Any) -> list[str]:
        trajectory, _ = run_episode(spec, make_policy("oracle", spec))
        messages = trajectory.model_dump(mode="json", exclude_none=True)["messages"]
        return [turn_text(m) for m in messages if m["role"] == "assistant"]

    return turns
