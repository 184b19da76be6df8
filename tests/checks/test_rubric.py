"""`rubric`: verdicts of a live judge (the rule judge of `tests/support/judge_endpoint.py`) on the answer or on every
assistant message; not graded without a judge or without a verdict; its `recompute` hook and flags through the
registry."""

from __future__ import annotations

import pytest

from coworkenv.checks import CHECKS, evaluate
from coworkenv.checks.kinds.rubric import NO_JUDGE
from coworkenv.judge.endpoint import active_judge, using_judge
from tests.support.builders import check
from tests.support.checks import Row, assert_pass_fail, cases, episode, recompute, registered, with_answer
from tests.support.judge_endpoint import judging

OWNER = 'The answer names "Ana Ruiz" as the owner of the renewal.'

ROWS: list[Row] = [
    (
        "rubric",
        {"kind": "rubric", "criteria": OWNER, "adversarial": ["The owner is not Ana Ruiz."]},
        with_answer("Ana Ruiz owns the renewal."),
        with_answer("The owner is not Ana Ruiz."),
    ),
    (
        "rubric-messages",
        {
            "kind": "rubric",
            "criteria": 'The assistant asks about "the budget", then says it is "approved".',
            "scope": "messages",
        },
        with_answer("Approved: it fits.", says=("What is the budget?",)),
        with_answer("Approved: it fits."),
    ),
]
"""The outcomes need a judge: `test_evaluate` runs them with the rule judge installed (without one every row is not
graded, `test_without_a_judge_nothing_is_graded`)."""


@pytest.fixture
def judge(tmp_path):
    with judging(tmp_path / "verdicts") as (server, judge):
        yield server


@pytest.mark.parametrize(("fields", "passing", "failing"), cases(ROWS))
def test_evaluate(fields, passing, failing, judge):
    assert_pass_fail(fields, passing, failing)


def test_registry_entry():
    # reads only what the assistant wrote; its criteria cannot be read off the oracle
    assert registered("rubric") == {"hooks": {"recompute"}, "guard": False, "answer": True, "evidence_for": set()}


@pytest.mark.parametrize("fields", [row[1] for row in ROWS], ids=[row[0] for row in ROWS])
def test_without_a_judge_nothing_is_graded(fields):
    with using_judge(None):
        assert evaluate(check(**fields), episode(answer="Ana Ruiz owns the renewal.")) == (None, NO_JUDGE)


def test_an_empty_answer_fails_without_asking(judge):
    assert evaluate(check(**ROWS[0][1]), episode(answer="  ")) == (False, "nothing to judge: the answer is empty")
    assert judge.requests == 0


def test_the_reason_carries_the_judges_words(judge):
    passed, reason = evaluate(check(**ROWS[0][1]), episode(answer="Bob owns it."))
    assert (passed, reason) == (False, "judge: fails the criteria: the response does not mention Ana Ruiz")


def test_messages_scope_reads_every_assistant_text_in_order(judge):
    fields = {"kind": "rubric", "criteria": 'Mentions "budget?" and "approves".', "scope": "messages"}
    evaluate(check(**fields), episode(answer="It approves.", says=("Budget?", "  ")))
    assert "<<<RESPONSE\nBudget?\n\nIt approves.\nRESPONSE>>>" in judge.bodies[-1]["messages"][-1]["content"]


def test_messages_scope_uses_evidence_texts_where_the_evidence_has_them(judge):
    class WithTexts:
        answer, says, texts = "final", (), ("called a tool and said budget", "final")
        judge = active_judge()  # what the evidence of an episode finished now carries

    fields = {"kind": "rubric", "criteria": 'Mentions "budget".', "scope": "messages"}
    assert evaluate(check(**fields), WithTexts())[0] is True


def test_a_malformed_verdict_is_asked_again_once_then_not_graded(judge):
    once = {"kind": "rubric", "criteria": 'MALFORMED-ONCE: mentions "Ana Ruiz".'}
    assert evaluate(check(**once), episode(answer="Ana Ruiz"))[0] is True
    always = {"kind": "rubric", "criteria": 'MALFORMED: mentions "Ana Ruiz".'}
    passed, reason = evaluate(check(**always), episode(answer="Ana Ruiz"))
    assert passed is None and reason.startswith("not graded: the judge's reply is malformed after 2 attempts")
    assert judge.per_criteria == {once["criteria"]: 2, always["criteria"]: 2}


def test_recompute_cannot_read_criteria_off_the_oracle():
    assert recompute(ROWS[0][1], episode(answer="Ana Ruiz owns it.")) is None


@pytest.mark.parametrize(
    ("fields", "error"),
    [
        ({"criteria": ""}, "at least 1 character"),
        ({"criteria": "x", "scope": "says"}, "'answer' or 'messages'"),
        ({"criteria": "x", "adversarial": "one"}, "valid list"),
    ],
)
def test_bad_fields_are_refused(fields, error):
    with pytest.raises(ValueError, match=error):
        CHECKS.get("rubric").model(id="r", kind="rubric", **fields)
