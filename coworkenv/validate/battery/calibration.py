"""Battery check `judge_calibration`: every `rubric` check's judge passes the oracle's text and fails each of the
rubric's adversarial answers (docs/design/contracts.md, "Judge").

Per rubric, `details["rubrics"]` holds `{"check", "scope", "ok", "oracle": {"passed", "reason"}, "adversarial":
[{"index", "passed", "reason"}, ...]}` (`passed` None: not graded), so the validations table answers "which rubrics
did the judge get wrong, and how". Without a judge (or without a verdict) the rubric is not verified, and the check
fails with a "not graded" message: a task whose rubric nobody could verify is not published as valid (its oracle
cannot score 1.0 either, since a check that is not graded is not passed). No rubric: passes, not applicable.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from coworkenv.checks.base import CheckBase, Judge
from coworkenv.checks.kinds.rubric import Rubric, judge_text, judged_text
from coworkenv.episode.evidence import Evidence
from coworkenv.validate.battery.context import CheckResultT, Context, battery_check

REASON_CHARS = 300
"""How much of a verdict's reason a row keeps."""


def rubrics(checks: Iterable[CheckBase]) -> Iterator[Rubric]:
    """The rubric checks, those nested in group checks (any check with a list of `checks`) included."""
    for check in checks:
        if isinstance(check, Rubric):
            yield check
        nested = getattr(check, "checks", None)
        if isinstance(nested, list):
            yield from rubrics(c for c in nested if isinstance(c, CheckBase))


def _verdict(check: Rubric, text: str, judge: Judge | None) -> dict[str, Any]:
    passed, reason = judge_text(check, text, judge)
    return {"passed": passed, "reason": reason[:REASON_CHARS]}


def calibrate(check: Rubric, oracle: Evidence) -> dict[str, Any]:
    """One rubric's calibration: the judge the oracle was graded with, on its text and on each adversarial answer."""
    mine = _verdict(check, judged_text(check.scope, oracle), oracle.judge)
    adversarial = [{"index": i, **_verdict(check, text, oracle.judge)} for i, text in enumerate(check.adversarial)]
    ok = mine["passed"] is True and all(a["passed"] is False for a in adversarial)
    return {"check": check.id, "scope": check.scope, "ok": ok, "oracle": mine, "adversarial": adversarial}


def problems(entry: dict[str, Any]) -> list[str]:
    """What is wrong with one rubric's calibration, for people."""
    found = []
    if entry["oracle"]["passed"] is None:
        found.append(f"{entry['check']}: the oracle's text is {entry['oracle']['reason']}")
    elif not entry["oracle"]["passed"]:
        found.append(f"{entry['check']}: the judge fails the oracle's text ({entry['oracle']['reason']})")
    for a in entry["adversarial"]:
        if a["passed"] is None:
            found.append(f"{entry['check']}: adversarial answer {a['index']} is {a['reason']}")
        elif a["passed"]:
            found.append(f"{entry['check']}: the judge passes adversarial answer {a['index']} ({a['reason']})")
    return found


@battery_check("judge_calibration")
def check_judge_calibration(ctx: Context) -> CheckResultT:
    found = list(rubrics(ctx.spec.checks))
    if not found:
        return True, {"applicable": False, "rubrics": []}, "not applicable: the task has no rubric checks"
    entries = [calibrate(check, ctx.oracle.evidence) for check in found]
    details: dict[str, Any] = {"applicable": True, "rubrics": entries}
    ungraded = [
        e["check"]
        for e in entries
        if e["oracle"]["passed"] is None or any(a["passed"] is None for a in e["adversarial"])
    ]
    if ungraded:
        details["ungraded"] = ungraded
    wrong = [p for e in entries for p in problems(e)]
    if wrong:
        head = f"not graded: {', '.join(ungraded)}; " if ungraded else ""
        return False, details, f"{head}the judge is not calibrated on {len(wrong)} verdict(s): " + "; ".join(wrong[:5])
    bare = [e["check"] for e in entries if not e["adversarial"]]
    note = f" (no adversarial answers on {', '.join(bare)}: only the oracle was checked)" if bare else ""
    return (
        True,
        details,
        f"the judge passes the oracle's text and fails every adversarial answer on {len(entries)} rubric(s){note}",
    )
