"""Repairs of dangling references: missing tools, misspelled tool and argument names, targets that exist nowhere."""

from __future__ import annotations

import copy
import re
from typing import Any

from pydantic import ValidationError

from coworkenv.repair.rules.common import REPAIRERS, RepairContext, Spec, _changed, _close, _drop_checks, oracle_run, untouched_run
from coworkenv.repair.rules.oracle import _spec_or_note
from coworkenv.validate.verdict import CheckOutcome
from coworkenv.workspace.tools import TOOLS


def _tools_for(spec_dict: Spec) -> list[str]:
    return [s["tool"] for s in spec_dict.get("solution", []) if isinstance(s, dict) and isinstance(s.get("tool"), str)]


def _params(tool: str) -> list[str]:
    return list(TOOLS.get(tool).args.model_fields)


def _args_fit(tool: str, args: Any) -> bool:
    try:
        TOOLS.get(tool).args.model_validate(args)
    except (ValidationError, ValueError, TypeError):
        return False
    return True


def _fix_args(args: dict[str, Any] | None, tool: str) -> tuple[dict[str, Any] | None, list[str]]:
    """Rename misspelled argument names to the tool's closest parameter; the names that have none."""
    if not args:
        return args, []
    fixed, lost = {}, []
    for name, value in args.items():
        target = name if name in _params(tool) else _close(name, _params(tool), cutoff=0.75)
        if target is None or target in fixed:
            lost.append(name)
        else:
            fixed[target] = value
    return fixed, lost


def _where(entry: dict[str, Any]) -> tuple[str, int] | None:
    match = re.match(r"^(solution|prohibited|checks)\[(\d+)\]", str(entry.get("where", "")))
    return (match.group(1), int(match.group(2))) if match else None


@REPAIRERS.register("references")
def repair_references(spec_dict: Spec, outcome: CheckOutcome, ctx: RepairContext) -> Spec | None:
    """Fix what `details["missing"]` names: a solution tool missing from `tools` is added (a misspelled one is
    renamed to the closest catalog tool); prohibited rules and tool checks get misspelled tools and argument
    names corrected (or are dropped); a check whose target exists nowhere is dropped when that is safe, a
    `mail_in_folder` check loses only its unknown ids, a `sheet_cell` column is mapped to the closest column."""
    spec = _spec_or_note(spec_dict, ctx)
    if spec is None:
        return None
    new = copy.deepcopy(spec_dict)
    missing = (outcome.details or {}).get("missing")
    if missing is None:  # feedback without details: ask the battery
        from coworkenv.validate.battery import Context, check_references

        missing = check_references(Context(spec))[1].get("missing", [])
    drop_rules: set[int] = set()
    drop_checks: dict[int, str] = {}
    for entry in missing:
        where = _where(entry)
        if where is None:
            continue
        section, i = where
        problem, ref = str(entry.get("problem", "")), entry.get("ref")
        if section == "solution":
            step = new["solution"][i]
            if step["tool"] not in TOOLS:
                fixed = _close(step["tool"], TOOLS.names())
                if fixed is not None and not _args_fit(fixed, step.get("args", {})):
                    fixed = None
                if fixed is None:
                    ctx.note(f"solution[{i}] calls unknown tool {step['tool']!r}: no close catalog tool")
                    continue
                ctx.note(f"solution[{i}]: tool {step['tool']!r} → {fixed!r}")
                step["tool"] = fixed
            if step["tool"] not in new["tools"]:
                ctx.note(f"added the solution's tool {step['tool']!r} to `tools`")
                new["tools"].append(step["tool"])
        elif section == "prohibited":
            rule = new["prohibited"][i]
            if rule["tool"] not in TOOLS:
                fixed = _close(rule["tool"], TOOLS.names())
                if fixed is None:
                    ctx.note(f"prohibited[{i}] names unknown tool {rule['tool']!r}: rule dropped")
                    drop_rules.add(i)
                    continue
                ctx.note(f"prohibited[{i}]: tool {rule['tool']!r} → {fixed!r}")
                rule["tool"] = fixed
            args, lost = _fix_args(rule.get("args"), rule["tool"])
            if lost:
                ctx.note(f"prohibited[{i}] on {rule['tool']}: argument(s) {lost} name no parameter; rule dropped (no valid call can break it)")
                drop_rules.add(i)
            elif args != rule.get("args"):
                ctx.note(f"prohibited[{i}] on {rule['tool']}: argument names {sorted(rule['args'])} → {sorted(args or {})}")
                rule["args"] = args
        else:
            check = new["checks"][i]
            kind = check.get("kind")
            if kind in ("tool_called", "tool_not_called"):
                if check["tool"] not in TOOLS:
                    fixed = _close(check["tool"], TOOLS.names())
                    if fixed is None:
                        drop_checks[i] = f"unknown tool {check['tool']!r}"
                        continue
                    ctx.note(f"check {check['id']}: tool {check['tool']!r} → {fixed!r}")
                    check["tool"] = fixed
                args, lost = _fix_args(check.get("args"), check["tool"])
                if lost:
                    drop_checks[i] = f"argument(s) {lost} name no parameter of {check['tool']}"
                    continue
                if args != check.get("args"):
                    check["args"] = args
                if kind == "tool_called" and check["tool"] not in new["tools"]:
                    if check["tool"] in _tools_for(new):
                        new["tools"].append(check["tool"])
                    else:
                        drop_checks[i] = f"{check['tool']} is not available to the task"
            elif kind == "mail_in_folder" and isinstance(ref, str) and "no such mail id" in problem:
                check["ids"] = [x for x in check["ids"] if x != ref]
                if not check["ids"]:
                    drop_checks[i] = "none of its mail ids exists"
                else:
                    ctx.note(f"check {check['id']}: removed unknown mail id {ref!r}")
            elif kind == "sheet_cell" and "no such column" in problem:
                sheet, _, column = str(ref).partition(".")
                columns = {c for st in (spec.initial_state, oracle_run(spec).evidence.final_state)
                           for c in st["sheets"].get(sheet, {}).get("columns", [])}  # fmt: skip
                fixed = _close(column, columns, cutoff=0.75)
                if fixed is None:
                    drop_checks[i] = f"sheet {sheet!r} has no column {column!r}"
                    continue
                ctx.note(f"check {check['id']}: column {column!r} → {fixed!r}")
                if check["column"] == column:
                    check["column"] = fixed
                if column in check["match"]:
                    check["match"] = {fixed if k == column else k: v for k, v in check["match"].items()}
            else:
                drop_checks[i] = problem or "its target exists nowhere"
    for i in sorted(drop_rules, reverse=True):
        del new["prohibited"][i]
    if drop_checks:
        why = "; ".join(f"{new['checks'][i].get('id')}: {w}" for i, w in sorted(drop_checks.items()))
        _drop_checks(new, set(drop_checks), untouched_run(spec).evidence, ctx, f"they reference nothing ({why})")
    return _changed(spec_dict, new)
