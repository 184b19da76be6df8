"""Repairs of dangling references: missing tools, misspelled tool and argument names, targets that exist nowhere."""

from __future__ import annotations

import copy
import re
from typing import Any

from pydantic import ValidationError

from coworkenv.checks.base import Fixing, unfixable
from coworkenv.checks.tool_refs import rename_args
from coworkenv.registry import closest
from coworkenv.repair.rules.common import (
    REPAIRERS,
    RepairContext,
    Spec,
    changed,
    drop_checks,
    kind_of,
    oracle_run,
    spec_or_note,
    untouched_run,
)
from coworkenv.spec.verdict import CheckOutcome
from coworkenv.workspace.tools import TOOLS


def _args_fit(tool: str, args: Any) -> bool:
    try:
        TOOLS.get(tool).args.model_validate(args)
    except (ValidationError, ValueError, TypeError):
        return False
    return True


def _where(entry: dict[str, Any]) -> tuple[str, int] | None:
    match = re.match(r"^(solution|prohibited|checks)\[(\d+)\]", str(entry.get("where", "")))
    return (match.group(1), int(match.group(2))) if match else None


def _fix_solution_step(new: Spec, i: int, ctx: RepairContext) -> None:
    step = new["solution"][i]
    if step["tool"] not in TOOLS:
        fixed = closest(step["tool"], TOOLS.names())
        if fixed is not None and not _args_fit(fixed, step.get("args", {})):
            fixed = None
        if fixed is None:
            ctx.note(f"solution[{i}] calls unknown tool {step['tool']!r}: no close catalog tool")
            return
        ctx.note(f"solution[{i}]: tool {step['tool']!r} → {fixed!r}")
        step["tool"] = fixed
    if step["tool"] not in new["tools"]:
        ctx.note(f"added the solution's tool {step['tool']!r} to `tools`")
        new["tools"].append(step["tool"])


def _fix_rule(new: Spec, i: int, ctx: RepairContext) -> bool:
    """Fix the rule's tool and argument names in place; False when the rule has to go."""
    rule = new["prohibited"][i]
    if rule["tool"] not in TOOLS:
        fixed = closest(rule["tool"], TOOLS.names())
        if fixed is None:
            ctx.note(f"prohibited[{i}] names unknown tool {rule['tool']!r}: rule dropped")
            return False
        ctx.note(f"prohibited[{i}]: tool {rule['tool']!r} → {fixed!r}")
        rule["tool"] = fixed
    args, lost = rename_args(rule.get("args"), rule["tool"])
    if lost:
        ctx.note(
            f"prohibited[{i}] on {rule['tool']}: argument(s) {lost} name no parameter; rule dropped (no valid call can break it)"
        )
        return False
    if args != rule.get("args"):
        ctx.note(f"prohibited[{i}] on {rule['tool']}: argument names {sorted(rule['args'])} → {sorted(args or {})}")
        rule["args"] = args
    return True


def _nested_last(missing: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The entries in their order, those inside group checks (`checks[i].checks[j]…`) last and from the highest
    member down, so that a member a group's hook removes does not shift the members later entries point to."""

    def path(entry: dict[str, Any]) -> list[int]:
        return [int(n) for n in re.findall(r"checks\[(\d+)\]", str(entry.get("where", "")))]

    flat = [e for e in missing if len(path(e)) < 2]
    nested = sorted((e for e in missing if len(path(e)) >= 2), key=path, reverse=True)
    return flat + nested


@REPAIRERS.register("references")
def repair_references(spec_dict: Spec, outcome: CheckOutcome, ctx: RepairContext) -> Spec | None:
    """Fix what `details["missing"]` names: a solution tool missing from `tools` is added (a misspelled one is
    renamed to the closest catalog tool); prohibited rules get misspelled tools and argument names corrected (or are
    dropped); a check is fixed by its kind's `fix_reference` hook (a misspelled tool or argument, an unknown mail id,
    a misspelled sheet column), else dropped when that is safe."""
    spec = spec_or_note(spec_dict, ctx)
    if spec is None:
        return None
    new = copy.deepcopy(spec_dict)
    missing = (outcome.details or {}).get("missing")
    if missing is None:  # feedback without details: ask the battery
        from coworkenv.validate.battery import Context, check_references

        missing = check_references(Context(spec))[1].get("missing", [])
    states: list[dict[str, Any]] = []

    def initial_and_oracle() -> list[dict[str, Any]]:
        if not states:
            states.extend([spec.initial_state, oracle_run(spec).evidence.final_state])
        return states

    fixing = Fixing(spec=new, states=initial_and_oracle, notes=ctx.notes)  # one list: notes keep their order
    drop_rules: set[int] = set()
    to_drop: dict[int, str] = {}
    for entry in _nested_last(missing):
        where = _where(entry)
        if where is None:
            continue
        section, i = where
        if section == "solution":
            _fix_solution_step(new, i, ctx)
        elif section == "prohibited":
            if not _fix_rule(new, i, ctx):
                drop_rules.add(i)
        else:
            check = new["checks"][i]
            kind = kind_of(check)
            hook = kind.fix_reference if kind is not None else None
            reason = unfixable(entry) if hook is None else hook(check, entry, fixing)
            if reason is not None:
                to_drop[i] = reason
    for i in sorted(drop_rules, reverse=True):
        del new["prohibited"][i]
    if to_drop:
        why = "; ".join(f"{new['checks'][i].get('id')}: {w}" for i, w in sorted(to_drop.items()))
        drop_checks(new, set(to_drop), untouched_run(spec).evidence, ctx, f"they reference nothing ({why})")
    return changed(spec_dict, new)
