"""Battery check `judge_calibration` with a live judge (the rule judge of `tests/support/judge_endpoint.py`): a good
rubric is accepted, one whose adversarial answer passes or whose oracle fails is rejected, with every verdict in the
row's details; without a judge the row says "not graded" and rejects; its repairer drops a miscalibrated rubric."""

from __future__ import annotations

from typing import Any

import pytest

from coworkenv.checks.kinds.rubric import NO_JUDGE
from coworkenv.grading.score import CheckResult
from coworkenv.judge.endpoint import using_judge
from coworkenv.repair.rules import REPAIRERS, RepairContext
from coworkenv.validate.battery import validate_spec
from tests.support.judge_endpoint import judging
from tests.validate.test_battery import BASE, outcome, spec

CRITERIA = 'The answer states the amount "1,250 EUR" and that the email was "archived".'
GOOD = {
    "id": "summary",
    "kind": "rubric",
    "criteria": CRITERIA,
    "adversarial": ["1,250 EUR, but it was not archived.", "Archived it."],
}
STUFFED = "1,250 EUR archived 1,250 EUR archived"
"""A keyword-stuffed answer the rule judge passes: a rubric with it as an adversarial answer is miscalibrated."""


NOT_GRADED = pytest.mark.skipif(
    "graded" not in CheckResult.model_fields,
    reason="grading a check that is not graded needs composite scoring's CheckResult.graded (issue 14, B)",
)
"""Without a judge a rubric is not graded, and the oracle's grade must record that (rather than fail to build)."""


def rubric_spec(*rubrics: dict[str, Any]) -> dict[str, Any]:
    return spec(checks=[*BASE["checks"], *rubrics])


@pytest.fixture
def judge(tmp_path):
    with judging(tmp_path / "verdicts") as (server, judge):
        yield server


def test_a_task_without_rubrics_is_not_applicable():
    row = outcome(validate_spec(spec()), "judge_calibration")
    assert (row.passed, row.details, row.message) == (
        True,
        {"applicable": False, "rubrics": []},
        "not applicable: the task has no rubric checks",
    )


def test_a_good_rubric_is_accepted_with_every_verdict_in_its_row(judge):
    v = validate_spec(rubric_spec(GOOD))
    row = outcome(v, "judge_calibration")
    assert v.valid and row.passed, [(r.code, r.message) for r in v.failures]
    assert row.details == {
        "applicable": True,
        "rubrics": [
            {
                "check": "summary",
                "scope": "answer",
                "ok": True,
                "oracle": {
                    "passed": True,
                    "reason": "judge: meets the criteria: the response mentions everything the criteria ask for",
                },
                "adversarial": [
                    {"index": 0, "passed": False, "reason": "judge: fails the criteria: the response denies archived"},
                    {
                        "index": 1,
                        "passed": False,
                        "reason": "judge: fails the criteria: the response does not mention 1,250 EUR",
                    },
                ],
            }
        ],
    }
    assert row.message == "the judge passes the oracle's text and fails every adversarial answer on 1 rubric(s)"


def test_a_rubric_whose_adversarial_answer_passes_is_rejected(judge):
    weak = {**GOOD, "adversarial": [*GOOD["adversarial"], STUFFED]}
    v = validate_spec(rubric_spec(weak))
    row = outcome(v, "judge_calibration")
    assert not v.valid and v.failed_codes == ["judge_calibration"]
    assert [a["passed"] for a in row.details["rubrics"][0]["adversarial"]] == [False, False, True]
    assert row.message == (
        "the judge is not calibrated on 1 verdict(s): summary: the judge passes adversarial answer 2 "
        "(judge: meets the criteria: the response mentions everything the criteria ask for)"
    )


def test_a_rubric_the_oracle_fails_is_rejected_by_the_gate_and_by_calibration(judge):
    wrong = {
        "id": "summary",
        "kind": "rubric",
        "criteria": 'The answer states "980 EUR".',
        "adversarial": ["1,250 EUR"],
    }
    v = validate_spec(rubric_spec(wrong))
    row = outcome(v, "judge_calibration")
    assert {"oracle_scores_1", "judge_calibration"} <= set(v.failed_codes)
    assert row.details["rubrics"][0]["oracle"]["passed"] is False and row.details["rubrics"][0]["ok"] is False


@NOT_GRADED
def test_without_a_judge_the_row_says_not_graded_and_rejects():
    with using_judge(None):
        v = validate_spec(rubric_spec(GOOD))
    row = outcome(v, "judge_calibration")
    assert not v.valid and not row.passed and row.details["ungraded"] == ["summary"]
    entry = row.details["rubrics"][0]
    assert entry["oracle"] == {"passed": None, "reason": NO_JUDGE} and {a["passed"] for a in entry["adversarial"]} == {
        None
    }
    assert row.message.startswith(
        "not graded: summary; the judge is not calibrated on 3 verdict(s): summary: the oracle's text is not graded"
    )


def test_re_validating_asks_the_judge_nothing_new(judge):
    validate_spec(rubric_spec(GOOD))
    asked = judge.requests
    assert validate_spec(rubric_spec(GOOD)).valid and judge.requests == asked


def _repair(data: dict[str, Any]) -> tuple[dict[str, Any] | None, list[str]]:
    v = validate_spec(data)
    ctx = RepairContext(validation=v)
    return REPAIRERS.get("judge_calibration")(data, outcome(v, "judge_calibration"), ctx), ctx.notes


def test_the_repairer_drops_a_miscalibrated_rubric(judge):
    fixed, notes = _repair(rubric_spec({**GOOD, "adversarial": [STUFFED]}))
    assert fixed is not None and [c["id"] for c in fixed["checks"]] == [c["id"] for c in BASE["checks"]]
    assert notes[0].startswith(
        "dropped check(s) summary: the judge does not tell the oracle's answer from the adversarial ones"
    )
    assert validate_spec(fixed).valid


@NOT_GRADED
def test_the_repairer_leaves_an_ungraded_rubric_alone():
    with using_judge(None):
        fixed, notes = _repair(rubric_spec(GOOD))
    assert fixed is None and notes == [f"rubric(s) summary not graded: {NO_JUDGE}; a judge must verify them"]


def test_a_rubric_nested_in_a_group_is_calibrated_too(judge):
    """A rubric inside `all_of` (inside `any_of`) is judged like a top-level one: a miscalibrated one is not hidden."""
    stuffed = {**GOOD, "id": "nested", "adversarial": [STUFFED]}
    group = {"id": "either", "kind": "any_of", "checks": [{"id": "both", "kind": "all_of", "checks": [stuffed]}]}
    row = outcome(validate_spec(rubric_spec(group)), "judge_calibration")
    assert [r["check"] for r in row.details["rubrics"]] == ["nested"] and not row.passed
    assert row.details["rubrics"][0]["adversarial"][0]["passed"] is True
