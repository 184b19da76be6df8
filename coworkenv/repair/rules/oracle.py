"""Repairs that trust the oracle: expectations recomputed from its final state, prohibited rules it must break narrowed."""

from __future__ import annotations

import copy
from typing import Any

from coworkenv.checks import DROP
from coworkenv.checks.matching import args_match, value_matches
from coworkenv.checks.text import as_list, glob_literal
from coworkenv.episode.evidence import Evidence
from coworkenv.grading.consistency import violating_step
from coworkenv.repair.rules.common import (
    REPAIRERS,
    RepairContext,
    Spec,
    changed,
    describe_errors,
    drop_checks,
    holds,
    kind_of,
    oracle_run,
    spec_or_note,
    untouched_run,
)
from coworkenv.spec.task import TaskSpec, ToolStep
from coworkenv.spec.verdict import CheckOutcome
from coworkenv.workspace.service import SERVICES
from coworkenv.workspace.tools import TOOLS

MAX_NARROWED = 8


def recompute(check: dict[str, Any], spec: TaskSpec, ev: Evidence) -> Any:
    """The check with its expectation taken from the (trusted) oracle's evidence, through its kind's `recompute`
    hook; `DROP` where the oracle never produces its target or must break it (every kind without a hook: the
    guards and the presence/absence checks); None where it cannot be recomputed."""
    kind = kind_of(check)
    hook = kind.recompute if kind is not None else None
    return DROP if hook is None else hook(check, ev, spec)


# --- prohibited rules that the task's own solution breaks -------------------------------------------------


def _oracle_calls(spec: TaskSpec, tool: str) -> list[dict[str, Any]]:
    return [s.args for s in spec.solution if isinstance(s, ToolStep) and s.tool == tool]


def narrow_rule(rule: dict[str, Any], spec: TaskSpec, ctx: RepairContext) -> list[dict[str, Any]]:
    """Replace a rule the oracle must break by rules on the targets the oracle leaves alone (the values the tool's
    target argument can take in the workspace); [] = drop it."""
    tool, args = rule.get("tool"), dict(rule.get("args") or {})
    matched = [a for a in _oracle_calls(spec, tool) if args_match(args, a)]
    key = TOOLS.get(tool).target if tool in TOOLS else None
    if key is not None:
        used = {str(v).lower() for a in matched for v in as_list(a.get(key))}
        narrowed = []
        for value in SERVICES.get(TOOLS.get(tool).service).target_values(spec.initial_state, key, args):
            if args.get(key) is not None and not value_matches(args[key], value.replace("*", "x")):
                continue
            if value.lower() in used or any(value_matches(value, u) for u in used):
                continue
            narrowed.append({**rule, "args": {**args, key: value if key == "to" else glob_literal(value)}})
        if narrowed and len(narrowed) <= MAX_NARROWED:
            ctx.note(
                f"prohibited rule on {tool} {args or ''} is broken by the task's own solution; narrowed to "
                f"{key} ∈ {[r['args'][key] for r in narrowed]} (the targets the solution leaves alone)"
            )
            return narrowed
    ctx.note(
        f"prohibited rule on {tool} {args or ''} dropped: the task's legitimate solution needs that call and no argument distinguishes a harmful one"
    )
    return []


def fix_prohibited(spec_dict: Spec, spec: TaskSpec, ctx: RepairContext) -> Spec | None:
    """Narrow or drop every prohibited rule that the oracle breaks or that no call can be built to violate."""
    new = copy.deepcopy(spec_dict)
    rules: list[dict[str, Any]] = []
    for i, rule in enumerate(spec.prohibited):
        raw = spec_dict["prohibited"][i]
        try:
            violating_step(rule)
        except ValueError:
            ctx.note(f"prohibited rule {i} on {rule.tool} dropped: no call can be built that it matches")
            continue
        if rule.tool not in TOOLS:
            ctx.note(f"prohibited rule {i} dropped: {TOOLS.unknown_message(rule.tool)}")
            continue
        if any(args_match(rule.args, a) for a in _oracle_calls(spec, rule.tool)):
            rules.extend(narrow_rule(raw, spec, ctx))
        else:
            rules.append(raw)
    new["prohibited"] = rules
    return changed(spec_dict, new)


# --- the repairers --------------------------------------------------------------------------------------------


@REPAIRERS.register("oracle_scores_1")
def repair_oracle(spec_dict: Spec, outcome: CheckOutcome, ctx: RepairContext) -> Spec | None:
    """Recompute the expectations that disagree with a trusted oracle's final state or answer; narrow or drop
    prohibited rules the oracle itself breaks; drop guards the oracle must break."""
    spec = spec_or_note(spec_dict, ctx)
    if spec is None:
        return None
    oracle = oracle_run(spec)
    if oracle.tool_errors:
        ctx.note(
            f"the oracle's own calls fail ({describe_errors(oracle.tool_errors)}): its final state cannot be trusted"
        )
        return None
    if oracle.grade.score == 1.0:
        ctx.note("without faults the oracle scores 1.0: the failure comes from the fault profile")
        return None
    new = copy.deepcopy(spec_dict)
    if oracle.grade.violations:
        new = fix_prohibited(new, spec, ctx) or new
    untouched = untouched_run(spec).evidence
    drop, unfixable = set(), []
    for i, result in enumerate(oracle.grade.checks):
        if result.passed or not result.graded or holds(new["checks"][i], oracle.evidence):
            # not graded: nothing to recompute; holding: only a required check failed, and that one is repaired
            continue
        fixed = recompute(new["checks"][i], spec, oracle.evidence)
        if fixed is DROP:
            drop.add(i)
        elif fixed is None or not holds(fixed, oracle.evidence):
            unfixable.append(f"{result.id} ({result.reason})")
        else:
            ctx.note(f"check {result.id}: expectation recomputed from the oracle ({result.reason})")
            new["checks"][i] = fixed
    drop_checks(new, drop, untouched, ctx, "the trusted oracle never produces their target or must break them")
    if unfixable:
        ctx.note(f"cannot recompute from the oracle: {', '.join(unfixable)}")
    return changed(spec_dict, new)


@REPAIRERS.register("prohibited_zeroes")
def repair_prohibited(spec_dict: Spec, outcome: CheckOutcome, ctx: RepairContext) -> Spec | None:
    """A rule the oracle itself must break: narrow it to the targets the solution leaves alone, else drop it."""
    spec = spec_or_note(spec_dict, ctx)
    if spec is None:
        return None
    return fix_prohibited(spec_dict, spec, ctx)
