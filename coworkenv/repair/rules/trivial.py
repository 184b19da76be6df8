"""Repairs of checks that hold without any work: strengthened where the solution's effect allows, else reweighted."""

from __future__ import annotations

import copy
from typing import Any

from coworkenv.checks import is_answer
from coworkenv.episode.evidence import Evidence
from coworkenv.grading.play import play
from coworkenv.repair.rules.common import (
    REPAIRERS,
    RepairContext,
    Spec,
    changed,
    drop_checks,
    holds,
    is_guard_kind,
    kind_of,
    oracle_run,
    spec_or_note,
    untouched_run,
)
from coworkenv.spec.task import AnswerStep
from coworkenv.spec.verdict import CheckOutcome


def _strengthen(check: dict[str, Any], oracle: Evidence, untouched: Evidence) -> dict[str, Any] | None:
    """A stricter version of a check that holds on the untouched workspace, from its kind's `strengthen` hook: one
    that the oracle's effect satisfies and the untouched workspace does not."""
    kind = kind_of(check)
    candidate = kind.strengthen(check, oracle) if kind is not None and kind.strengthen is not None else None
    if candidate is not None and holds(candidate, oracle) and not holds(candidate, untouched):
        return candidate
    return None


def _is_guard(check: dict[str, Any], oracle: Evidence) -> bool:
    """A check that holds before and after the oracle: it guards something the task must leave alone (a check of the
    final answer never does)."""
    return is_guard_kind(check) or (not is_answer(check) and holds(check, oracle))


def repair_trivial(spec_dict: Spec, ctx: RepairContext, *, guards_count: bool, max_share: float) -> Spec | None:
    """Strengthen the checks that hold on the untouched workspace where the solution's effect allows it, drop
    those that are not guards (they hold untouched but not after the solution: nothing to preserve), then
    scale the weights of the ones still holding down to `max_share` of the total. With `guards_count` False the
    guard kinds (`unchanged`, `tool_not_called`) are left out of the share, as `checks_discriminate` counts."""
    spec = spec_or_note(spec_dict, ctx)
    if spec is None:
        return None
    oracle = oracle_run(spec).evidence
    untouched = [untouched_run(spec).evidence, play(spec, [AnswerStep(answer="")]).evidence]
    new = copy.deepcopy(spec_dict)
    drop = set()
    for i, ch in enumerate(new["checks"]):
        if is_guard_kind(ch) or not any(holds(ch, ev) for ev in untouched):
            continue
        stronger = _strengthen(ch, oracle, untouched[0])
        if stronger is not None and not holds(stronger, untouched[1]):
            ctx.note(
                f"check {ch['id']} held on the untouched workspace; strengthened to what only the solution achieves"
            )
            new["checks"][i] = stronger
        elif not _is_guard(ch, oracle):
            drop.add(i)
    drop_checks(new, drop, untouched[0], ctx, "they hold on the untouched workspace")
    return changed(spec_dict, reweight(new, untouched, ctx, guards_count=guards_count, max_share=max_share) or new)


MAX_TRIVIAL_SHARE = 0.5
"""After repair, answering "Done." earns at most this completion: a score of 0.6 < 0.75."""
MAX_HOLDING_SHARE = 0.25
"""After a `checks_discriminate` repair, non-guard checks holding untouched carry at most this share (battery: < 30 %)."""


def reweight(
    spec_dict: Spec, untouched: list[Evidence], ctx: RepairContext, *, guards_count: bool, max_share: float
) -> Spec | None:
    """Scale the weights of the checks that hold on the untouched workspace down to `max_share` of the total."""
    checks = spec_dict["checks"]
    trivial = [
        i
        for i, ch in enumerate(checks)
        if (guards_count or not is_guard_kind(ch)) and any(holds(ch, ev) for ev in untouched)
    ]
    t = sum(float(checks[i].get("weight", 1.0)) for i in trivial)
    d = sum(float(ch.get("weight", 1.0)) for i, ch in enumerate(checks) if i not in trivial)
    if not any(not holds(ch, ev) for ch in checks for ev in untouched[:1]) or d == 0:
        ctx.note("every check holds on the untouched workspace: the task tests nothing")
        return None
    if t == 0 or t / (t + d) <= max_share:
        return None
    factor = d * max_share / ((1 - max_share) * t)
    new = copy.deepcopy(spec_dict)
    for i in trivial:
        new["checks"][i]["weight"] = max(round(float(checks[i].get("weight", 1.0)) * factor * 0.999, 4), 1e-4)
    ctx.note(
        f"weights of the checks that hold untouched scaled by {factor:.3g} (they carried {t / (t + d):.0%} of the weight)"
    )
    return new


@REPAIRERS.register("answer_only_fails")
def repair_answer_only(spec_dict: Spec, outcome: CheckOutcome, ctx: RepairContext) -> Spec | None:
    """Answering "Done." passes: strengthen or drop the checks that hold without work, reweight the guards."""
    return repair_trivial(spec_dict, ctx, guards_count=True, max_share=MAX_TRIVIAL_SHARE)


@REPAIRERS.register("empty_scores_0")
def repair_empty(spec_dict: Spec, outcome: CheckOutcome, ctx: RepairContext) -> Spec | None:
    return repair_trivial(spec_dict, ctx, guards_count=True, max_share=MAX_TRIVIAL_SHARE)


@REPAIRERS.register("checks_discriminate")
def repair_discriminate(spec_dict: Spec, outcome: CheckOutcome, ctx: RepairContext) -> Spec | None:
    """(advisory) Non-guard checks holding untouched carry too much weight: strengthen them or lower their weight."""
    return repair_trivial(spec_dict, ctx, guards_count=False, max_share=MAX_HOLDING_SHARE)
