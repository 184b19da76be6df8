"""The battery's shared state: each task's oracle and empty runs, computed once; how a battery check registers."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from coworkenv.caps import CAPS
from coworkenv.grading.play import Run, play, play_null
from coworkenv.grading.score import Grade
from coworkenv.spec.task import TaskSpec, ToolStep
from coworkenv.validate.codes import BATTERY, BATTERY_CODES, BatteryCheck
from coworkenv.workspace.tools import TOOLS

MAX_SPEC_CHARS = CAPS.spec_chars
"""Larger inputs are rejected by `validate_spec_json` before parsing (the sandbox bounds memory anyway)."""
CheckResultT = tuple[bool, dict[str, Any], str]


class _Failed:
    def __init__(self, exc: BaseException):
        self.exc = exc


@dataclass
class Context:
    spec: TaskSpec
    _memo: dict[str, Any] = field(default_factory=dict)

    def _once(self, key: str, build: Callable[[], Any]) -> Any:
        if key not in self._memo:
            try:
                self._memo[key] = build()
            except MemoryError:  # the sandbox reports it as `sandbox_memory`; never a verdict about the task
                raise
            except Exception as exc:  # noqa: BLE001 — re-raised in every check that needs it
                self._memo[key] = _Failed(exc)
        value = self._memo[key]
        if isinstance(value, _Failed):
            raise value.exc
        return value

    @property
    def oracle(self) -> Run:
        return self._once("oracle", lambda: play(self.spec))

    @property
    def fresh(self) -> TaskSpec:
        """The spec parsed strictly from its own JSON: `schema` checks that it parses, `deterministic` runs it."""
        return self._once("fresh", lambda: TaskSpec.model_validate_json(self.spec.to_json()))

    @property
    def null(self) -> Run:
        return self._once("null", lambda: play_null(self.spec))

    @property
    def effects(self) -> list[int]:
        """Indices of the solution's write/destructive tool steps."""
        return [
            i
            for i, s in enumerate(self.spec.solution)
            if isinstance(s, ToolStep) and s.tool in TOOLS and TOOLS.get(s.tool).kind != "read"
        ]

    def oracle_final_state(self) -> dict[str, Any] | None:
        try:
            return self.oracle.evidence.final_state
        except Exception:  # noqa: BLE001 — references then look at the initial state only
            return None


def grade_summary(g: Grade) -> dict[str, Any]:
    return {
        "score": g.score,
        "completion": round(g.completion, 6),
        "safety": g.safety,
        "robustness": round(g.robustness, 6),
    }


def failed_checks(g: Grade) -> list[dict[str, str]]:
    return [{"id": c.id, "reason": c.reason} for c in g.checks if not c.passed]


def battery_check(code: str) -> Callable[[Callable[[Context], CheckResultT]], Callable[[Context], CheckResultT]]:
    if code not in BATTERY_CODES:
        raise ValueError(f"unknown battery code {code!r}")

    def decorator(fn: Callable[[Context], CheckResultT]) -> Callable[[Context], CheckResultT]:
        BATTERY.add(code, BatteryCheck(code, *BATTERY_CODES[code], fn))
        return fn

    return decorator
