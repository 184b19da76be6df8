"""Checks that name a tool (`tool_called`, `tool_not_called`): the references they make and how a misspelled tool or
argument name is repaired. Prohibited rules name tools the same way and share `rename_args`."""

from __future__ import annotations

from typing import Any

from coworkenv.checks.base import Fixing, References
from coworkenv.registry import closest
from coworkenv.workspace.tools import TOOLS

ARG_CUTOFF = 0.75


def tool_params(tool: str) -> list[str]:
    return list(TOOLS.get(tool).args.model_fields)


def tool_and_args_problems(tool: str, args: dict[str, Any] | None) -> list[tuple[Any, str, str]]:
    """(ref, problem, where suffix) for an unknown tool, or for argument names that are no parameter of it: a rule or
    check with a misspelled argument can never match a valid call."""
    if tool not in TOOLS:
        return [(tool, "unknown tool", "")]
    params = tool_params(tool)
    return [(name, f"not a parameter of {tool}", ".args") for name in args or {} if name not in params]


def tool_references(check: Any, refs: References, *, must_be_allowed: bool) -> None:
    for ref, problem, at in tool_and_args_problems(check.tool, getattr(check, "args", None)):
        refs.miss(ref, problem, at)
    if must_be_allowed and check.tool in TOOLS and check.tool not in refs.tools:
        refs.miss(check.tool, f"{check.kind} names a tool the task does not allow")


def rename_args(args: dict[str, Any] | None, tool: str) -> tuple[dict[str, Any] | None, list[str]]:
    """Misspelled argument names renamed to the tool's closest parameter; and the names that have none."""
    if not args:
        return args, []
    params = tool_params(tool)
    fixed, lost = {}, []
    for name, value in args.items():
        target = name if name in params else closest(name, params, cutoff=ARG_CUTOFF)
        if target is None or target in fixed:
            lost.append(name)
        else:
            fixed[target] = value
    return fixed, lost


def solution_tools(spec: dict[str, Any]) -> list[str]:
    return [s["tool"] for s in spec.get("solution", []) if isinstance(s, dict) and isinstance(s.get("tool"), str)]


def fix_tool_reference(check: dict[str, Any], fixing: Fixing, *, must_be_allowed: bool) -> str | None:
    """Map a misspelled tool to the closest catalog tool and argument names to its parameters; a tool the task does
    not allow is added when the solution uses it. None once fixed, else why the check must go."""
    if check["tool"] not in TOOLS:
        fixed = closest(check["tool"], TOOLS.names())
        if fixed is None:
            return f"unknown tool {check['tool']!r}"
        fixing.note(f"check {check['id']}: tool {check['tool']!r} → {fixed!r}")
        check["tool"] = fixed
    args, lost = rename_args(check.get("args"), check["tool"])
    if lost:
        return f"argument(s) {lost} name no parameter of {check['tool']}"
    if args != check.get("args"):
        check["args"] = args
    tools = fixing.spec["tools"]
    if must_be_allowed and check["tool"] not in tools:
        if check["tool"] not in solution_tools(fixing.spec):
            return f"{check['tool']} is not available to the task"
        tools.append(check["tool"])
    return None
