"""Battery checks `schema` and `references`: the spec parses, and everything it names exists."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from coworkenv.spec.task import TaskSpec, ToolStep
from coworkenv.validate.battery.context import CheckResultT, Context, battery_check

# --- schema & references ---------------------------------------------------------------------------------


@battery_check("schema")
def check_schema(ctx: Context) -> CheckResultT:
    # A spec object may have been built without validation (model_construct): round-trip it strictly.
    TaskSpec.model_validate_json(ctx.spec.to_json())
    return True, {}, "the spec parses as a TaskSpec"


def _schema_failure(exc: Exception) -> CheckResultT:
    if isinstance(exc, ValidationError):
        errors = [
            {"loc": [p if isinstance(p, int) else str(p) for p in e.get("loc", ())], "msg": str(e.get("msg", "")), "type": str(e.get("type", ""))}
            for e in exc.errors(include_url=False)[:50]
        ]  # fmt: skip
        from coworkenv.errors import format_validation_error

        return False, {"errors": errors, "error_count": exc.error_count()}, f"not a valid TaskSpec: {format_validation_error(exc)}"
    return False, {"errors": [{"loc": [], "msg": str(exc)[:2000], "type": type(exc).__name__}]}, f"not a valid TaskSpec: {str(exc)[:500]}"


def _records(state: dict[str, Any] | None, service: str, collection: str) -> list[dict[str, Any]]:
    if not state:
        return []
    value = state.get(service, {}).get(collection, [])
    return value if isinstance(value, list) else []


def _tool_params(tool: str) -> set[str]:
    from coworkenv.workspace.tools import TOOLS

    return set(TOOLS.get(tool).args.model_fields)


@battery_check("references")
def check_references(ctx: Context) -> CheckResultT:
    from coworkenv.grading.matching import args_match
    from coworkenv.spec.workspace import COLLECTIONS
    from coworkenv.workspace.paths import is_normal_path
    from coworkenv.workspace.tools import TOOLS

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

    def tool_and_args(where: str, tool: str, args: dict[str, Any] | None) -> None:
        if tool not in TOOLS:
            miss(where, tool, "unknown tool")
            return
        for name in args or {}:
            if name not in _tool_params(tool):
                miss(f"{where}.args", name, f"not a parameter of {tool}")

    for i, rule in enumerate(spec.prohibited):
        tool_and_args(f"prohibited[{i}]", rule.tool, rule.args)

    initial = spec.initial_state
    final = ctx.oracle_final_state()
    states = [s for s in (initial, final) if s]

    def any_state(fn: Callable[[dict[str, Any]], bool]) -> bool:
        return any(fn(s) for s in states)

    named_paths = {str(v) for s in spec.solution if isinstance(s, ToolStep) for k, v in s.args.items() if k in ("path", "src", "dst")}

    for i, check in enumerate(spec.checks):
        where = f"checks[{i}]"
        extra = {"check": check.id, "kind": check.kind}
        kind = check.kind
        if kind in ("tool_called", "tool_not_called"):
            tool_and_args(where, check.tool, getattr(check, "args", None))
            if kind == "tool_called" and check.tool in TOOLS and check.tool not in allowed:
                miss(where, check.tool, "tool_called names a tool the task does not allow", **extra)
        elif kind == "mail_in_folder":
            for mid in check.ids:
                if not any_state(lambda s, mid=mid: any(m.get("id") == mid for m in _records(s, "mail", "messages"))):
                    miss(where, mid, "no such mail id, initially or after the oracle", **extra)
        elif kind == "record":
            if COLLECTIONS.get(check.service) != check.collection:
                miss(where, f"{check.service}.{check.collection}", "no such collection", **extra)
            elif not any_state(lambda s, c=check: any(args_match(c.match, r) for r in _records(s, c.service, c.collection))):
                miss(where, check.match, f"no {check.collection} record matches, initially or after the oracle", **extra)
        elif kind == "sheet_cell":
            sheets = [s.get("sheets", {}).get(check.sheet) for s in states]
            sheets = [s for s in sheets if isinstance(s, dict)]
            if not sheets:
                miss(where, check.sheet, "no such sheet, initially or after the oracle", **extra)
            else:
                columns = {c for s in sheets for c in s.get("columns", [])}
                for column in [*check.match, check.column]:
                    if column not in columns:
                        miss(where, f"{check.sheet}.{column}", "no such column in the sheet", **extra)
        elif kind == "event_absent":
            target = check.target_id
            if target is not None and not any_state(lambda s, t=target: any(e.get("id") == t for e in _records(s, "calendar", "events"))):
                miss(where, target, "event id exists neither initially nor after the oracle: the check holds trivially", **extra)
        elif kind in ("file_exists", "file_contains", "file_equals", "csv_cell", "file_absent") or (kind == "unchanged" and check.path is not None):
            path = check.path
            if not is_normal_path(path):
                miss(where, path, "path is not relative and normalized", **extra)
            elif kind != "file_absent" and not any_state(lambda s, p=path: p in s.get("files", {})) and path not in named_paths:
                miss(where, path, "file exists nowhere: not initially, not after the oracle, not in any solution step", **extra)
    if missing:
        listed = "; ".join(f"{m['where']}: {m['ref']} ({m['problem']})" for m in missing[:5])
        return False, {"missing": missing}, f"{len(missing)} missing reference(s): {listed}"
    return True, {"missing": []}, "all tools, check targets and rules refer to things that exist"
