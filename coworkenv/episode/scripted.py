"""Scripted policies, the core's own: the oracle plays the task's solution steps (retrying injected faults), null does
nothing. The gate, the battery and the repairers play them without the agents layer; `coworkenv.agents` offers them
as the agents `oracle` and `null`."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from coworkenv.episode.runner import RETRIES_PER_STEP
from coworkenv.memo import by_identity
from coworkenv.spec.task import AnswerStep, SayStep, SolutionStep, TaskSpec, ToolStep

RETRYABLE = (429, 500)


@by_identity(4096)
def _arguments(step: ToolStep) -> str:
    """The step's arguments as the JSON text a model sends, made once per step of a frozen spec: the battery and
    the repairers play each oracle several times."""
    return json.dumps(step.args, ensure_ascii=False)


class ScriptedPolicy:
    """Plays solution steps in order, one tool call per assistant message.

    A call that fails with 429/500 is retried (up to `max_retries` times in a row): injected faults depend
    on the call index, so a retry gets a fresh draw.
    """

    def __init__(
        self, spec: TaskSpec, *, steps: Sequence[SolutionStep] | None = None, max_retries: int = RETRIES_PER_STEP
    ):
        self.steps = list(spec.solution if steps is None else steps)
        self.max_retries = max_retries
        self._cursor = 0
        self._calls = 0
        self._retries = 0
        self._last_call: dict[str, Any] | None = None

    def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
        if self._last_call is not None and self._should_retry(messages[-1]):
            self._retries += 1
            return self._call(self._last_call["name"], self._last_call["arguments"])
        self._retries = 0
        self._last_call = None
        if self._cursor >= len(self.steps):  # the user answered the final answer: say it again
            final = self.steps[-1] if self.steps else AnswerStep(answer="")
            return {"role": "assistant", "content": getattr(final, "answer", "")}
        step = self.steps[self._cursor]
        self._cursor += 1
        if isinstance(step, ToolStep):
            self._last_call = {"name": step.tool, "arguments": _arguments(step)}
            return self._call(step.tool, self._last_call["arguments"])
        text = step.say if isinstance(step, SayStep) else step.answer
        return {"role": "assistant", "content": text}

    def _should_retry(self, last: dict[str, Any]) -> bool:
        if last.get("role") != "tool" or self._retries >= self.max_retries:
            return False
        content = last.get("content") or "{}"
        if isinstance(content, str) and '"error"' not in content:  # no error key: not worth parsing a whole result
            return False
        try:
            error = json.loads(content).get("error")
        except (ValueError, AttributeError):
            return False
        return isinstance(error, dict) and error.get("code") in RETRYABLE

    def _call(self, name: str, arguments: str) -> dict[str, Any]:
        self._calls += 1
        call = {"id": f"call_{self._calls}", "type": "function", "function": {"name": name, "arguments": arguments}}
        return {"role": "assistant", "content": None, "tool_calls": [call]}


class NullPolicy:
    """Does nothing: no tool call, an empty answer. Must always score 0."""

    def __init__(self, spec: TaskSpec):
        pass

    def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
        return {"role": "assistant", "content": ""}
