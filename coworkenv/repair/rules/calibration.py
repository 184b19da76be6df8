"""Repair of `judge_calibration`: a rubric the judge gets wrong is dropped when a discriminating check remains.

Nothing about a rubric can be recomputed: weakening it (dropping the adversarial answers it passes) would only hide
that it cannot tell a right answer from a plausible wrong one. A rubric that is not graded (no judge, no verdict)
is left alone: nothing is known to be wrong with it, and the task stays rejected until a judge can verify it.
"""

from __future__ import annotations

import copy

from coworkenv.repair.rules.common import (
    REPAIRERS,
    RepairContext,
    Spec,
    changed,
    drop_checks,
    oracle_run,
    spec_or_note,
    untouched_run,
)
from coworkenv.spec.verdict import CheckOutcome
from coworkenv.validate.battery.calibration import calibrate, problems, rubrics


@REPAIRERS.register("judge_calibration")
def repair_calibration(spec_dict: Spec, outcome: CheckOutcome, ctx: RepairContext) -> Spec | None:
    """Calibrate every rubric again (never trusting the outcome's details) and drop the top-level ones the judge
    gets wrong; not graded ones, or ones nested in a group, stop the repair with a note."""
    spec = spec_or_note(spec_dict, ctx)
    if spec is None:
        return None
    oracle = oracle_run(spec).evidence
    top = {c.id for c in spec.checks}
    entries = [calibrate(check, oracle) for check in rubrics(spec.checks)]
    ungraded = [
        e["check"]
        for e in entries
        if e["oracle"]["passed"] is None or any(a["passed"] is None for a in e["adversarial"])
    ]
    if ungraded:
        ctx.note(
            f"rubric(s) {', '.join(ungraded)} not graded: {entries[0]['oracle']['reason'] if entries else ''}; a judge must verify them"
        )
        return None
    wrong = [e for e in entries if not e["ok"]]
    nested = [e["check"] for e in wrong if e["check"] not in top]
    if nested:
        ctx.note(f"rubric(s) {', '.join(nested)} inside a group are miscalibrated; the group cannot lose a member here")
        return None
    new = copy.deepcopy(spec_dict)
    drop = {i for i, ch in enumerate(new["checks"]) if ch.get("id") in {e["check"] for e in wrong}}
    why = (
        "the judge does not tell the oracle's answer from the adversarial ones: "
        + "; ".join(p for e in wrong for p in problems(e))[:500]
    )
    if not drop_checks(new, drop, untouched_run(spec).evidence, ctx, why):
        return None
    return changed(spec_dict, new)
