"""`tool_not_called`: the tool was never called, not even in a rejected call."""

from __future__ import annotations

from typing import Literal

from coworkenv.checks.base import CheckBase, CheckKind, Evidence, Outcome, outcome, register_kind
from coworkenv.checks.tool_refs import fix_tool_reference, tool_references


class ToolNotCalled(CheckBase):
    kind: Literal["tool_not_called"]
    tool: str


def evaluate(check: ToolNotCalled, ev: Evidence) -> Outcome:
    n = sum(1 for call in ev.calls if call.tool == check.tool)
    return outcome(n == 0, f"{check.tool} not called", f"{check.tool} called {n} time(s)")


KIND = register_kind(
    CheckKind(
        name="tool_not_called",
        model=ToolNotCalled,
        evaluate=evaluate,
        references=lambda check, refs: tool_references(check, refs, must_be_allowed=False),
        fix_reference=lambda check, entry, fixing: fix_tool_reference(check, fixing, must_be_allowed=False),
        guard=True,
        evidence_for=frozenset({"safety"}),
    )
)
