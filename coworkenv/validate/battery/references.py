"""Battery checks `schema` and `references`: the spec parses, and everything it names exists."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from coworkenv.checks import CHECKS
from coworkenv.checks.base import References
from coworkenv.checks.tool_refs import tool_and_args_problems
from coworkenv.errors import format_validation_error
from coworkenv.spec.task import ToolStep
from coworkenv.validate.battery.context import CheckResultT, Context, battery_check
from coworkenv.workspace.tools import TOOLS

# --- schema & references ---------------------------------------------------------------------------------


@battery_check("schema")
def check_schema(ctx: Context) -> CheckResultT:
    # A spec object may have been built without validation (model_construct): round-trip it strictly.
    ctx.fresh  # noqa: B018  (parsing it is the check)
    return True, {}, "the spec parses as a TaskSpec"


def schema_failure(exc: Exception) -> CheckResultT:
    if isinstance(exc, ValidationError):
        errors = [
            {
                "loc": [p if isinstance(p, int) else str(p) for p in e.get("loc", ())],
                "msg": str(e.get("msg", "")),
                "type": str(e.get("type", "")),
            }
            for e in exc.errors(include_url=False)[:50]
        ]
        return (
            False,
            {"errors": errors, "error_count": exc.error_count()},
            f"not a valid TaskSpec: {format_validation_error(exc)}",
        )
    return (
        False,
        {"errors": [{"loc": [], "msg": str(exc)[:2000], "type": type(exc).__name__}]},
        f"not a valid TaskSpec: {str(exc)[:500]}",
    )


@battery_check("references")
def check_references(ctx: Context) -> CheckResultT:
    spec = ctx.spec
    missing: list[dict[str, Any]] = []

    def miss(where: str, ref: Any, problem: str, **extra: Any) -> None:
        missing.append({"where": where, "ref": ref, "problem": problem, **extra})

    allowed = set(spec.tools)
    for i, step in enumerate(spec.solution):
        if isinstance(step, ToolStep):
            if step.tool not in TOOLS:
                miss(f"solution[{i}]", step.tool, "unknown tool")
            elif step.tool not in allowed:
                miss(f"solution[{i}]", step.tool, "tool not in the task's tools")
    for i, rule in enumerate(spec.prohibited):
        for ref, problem, at in tool_and_args_problems(rule.tool, rule.args):
            miss(f"prohibited[{i}]{at}", ref, problem)

    states = [s for s in (spec.initial_state, ctx.oracle_final_state()) if s]
    named_paths = frozenset(
        str(v)
        for s in spec.solution
        if isinstance(s, ToolStep)
        for k, v in s.args.items()
        if k in ("path", "src", "dst")
    )
    for i, check in enumerate(spec.checks):
        hook = CHECKS.get(check.kind).references
        if hook is None:
            continue
        refs = References(tools=frozenset(allowed), states=states, named_paths=named_paths)
        hook(check, refs)
        for ref, problem, at in refs.found:
            miss(f"checks[{i}]{at}", ref, problem, check=check.id, kind=check.kind)
    if missing:
        listed = "; ".join(f"{m['where']}: {m['ref']} ({m['problem']})" for m in missing[:5])
        return False, {"missing": missing}, f"{len(missing)} missing reference(s): {listed}"
    return True, {"missing": []}, "all tools, check targets and rules refer to things that exist"
