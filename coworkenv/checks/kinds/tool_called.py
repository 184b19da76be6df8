"""`tool_called`: the tool succeeded between `min` and `max` times, with arguments matching `args`."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from coworkenv.checks.base import DROP, CheckBase, CheckKind, Evidence, Outcome, outcome, register_kind
from coworkenv.checks.matching import args_match, args_matcher
from coworkenv.checks.tool_refs import fix_tool_reference, tool_references


class ToolCalled(CheckBase):
    kind: Literal["tool_called"]
    tool: str
    args: dict[str, Any] | None = None
    min: int = Field(default=1, ge=0)
    max: int | None = Field(default=None, ge=0)


def evaluate(check: ToolCalled, ev: Evidence) -> Outcome:
    matches = args_matcher(check.args)
    n = sum(1 for call in ev.calls if call.ok and call.tool == check.tool and matches(call.args))
    ok = n >= check.min and (check.max is None or n <= check.max)
    bounds = f"[{check.min}, {'∞' if check.max is None else check.max}]"
    return outcome(ok, f"{check.tool} succeeded {n} time(s)", f"{check.tool} succeeded {n} time(s), wanted {bounds}")


def recompute(check: dict[str, Any], ev: Evidence, spec: Any) -> Any:
    """Bounds widened to what the oracle does; arguments it never uses are dropped."""
    calls = [c for c in ev.calls if c.ok and c.tool == check["tool"]]
    n = sum(1 for c in calls if args_match(check.get("args"), c.args))
    if n == 0:
        return DROP if not calls else recompute({k: v for k, v in check.items() if k != "args"}, ev, spec)
    new = {**check, "min": min(check.get("min", 1), n)}
    if check.get("max") is not None:
        new["max"] = max(check["max"], n)
    return new


KIND = register_kind(
    CheckKind(
        name="tool_called",
        model=ToolCalled,
        evaluate=evaluate,
        references=lambda check, refs: tool_references(check, refs, must_be_allowed=True),
        recompute=recompute,
        strengthen=lambda check, oracle: {**check, "min": max(1, check.get("min", 1))},
        fix_reference=lambda check, entry, fixing: fix_tool_reference(check, fixing, must_be_allowed=True),
    )
)
