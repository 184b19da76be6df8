"""`answer_length`: word and character bounds on the answer, and its `recompute` hook."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from tests.support.builders import check
from tests.support.checks import Row, assert_pass_fail, cases, episode, holds, recompute, registered, with_answer

SUMMARY = "Three tickets are open; the VPN outage is the oldest and blocks the finance team."

ROWS: list[Row] = [
    ("answer_length-min_words", {"kind": "answer_length", "min_words": 10}, with_answer(SUMMARY), with_answer("Done.")),
    (
        "answer_length-min_chars",
        {"kind": "answer_length", "min_chars": 20},
        with_answer(SUMMARY),
        with_answer("  Done, all good.   "),
    ),
    (
        "answer_length-max_chars",
        {"kind": "answer_length", "min_words": 2, "max_chars": 40},
        with_answer("Two tickets open."),
        with_answer(SUMMARY),
    ),
    (
        "answer_length-scope-messages",
        {"kind": "answer_length", "min_words": 10, "scope": "messages"},
        with_answer("Done.", says=(SUMMARY,)),
        with_answer("Done.", says=("Which ones?",)),
    ),
]


def length(**fields) -> dict:
    return {"kind": "answer_length", **fields}


@pytest.mark.parametrize(("fields", "passing", "failing"), cases(ROWS))
def test_evaluate(fields, passing, failing):
    assert_pass_fail(fields, passing, failing)


def test_registry_entry():
    assert registered("answer_length") == {
        "hooks": {"recompute"},
        "guard": False,
        "answer": True,
        "evidence_for": set(),
    }


@pytest.mark.parametrize(
    ("fields", "error"),
    [
        ({}, "give min_words or min_chars"),
        ({"min_chars": 10, "max_chars": 5}, "max_chars is less than min_chars"),
        ({"min_words": 0}, "greater than or equal to 1"),
    ],
)
def test_bad_bounds_are_refused(fields, error):
    with pytest.raises(ValidationError, match=error):
        check(**length(**fields))


def test_recompute_widens_the_bounds_to_the_oracles_answer():
    ev = episode(answer="Two tickets are open.")
    fixed = recompute(length(min_words=10, min_chars=30, max_chars=40), ev)
    assert fixed == {"id": "chk-answer_length", **length(min_words=4, min_chars=21, max_chars=40)} and holds(fixed, ev)
    assert not holds(fixed, episode(answer="Done."))
    assert recompute(length(min_words=2, max_chars=10), ev) == {
        "id": "chk-answer_length",
        **length(min_words=2, max_chars=21),
    }
    assert recompute(length(min_words=10), episode(answer="Done.")) is None  # never loosened to what "Done." meets
