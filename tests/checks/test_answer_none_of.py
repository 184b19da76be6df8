"""`answer_none_of`: the answer names none of the phrases, a negated mention excepted; its `recompute` hook and its
guard flag."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from coworkenv.checks import DROP
from tests.support.builders import check
from tests.support.checks import Row, assert_pass_fail, cases, episode, holds, recompute, registered, with_answer

ROWS: list[Row] = [
    (
        "answer_none_of",
        {"kind": "answer_none_of", "phrases": ["Lyon", "Nice"]},
        with_answer("Pick Paris, not Lyon."),
        with_answer("Pick Lyon."),
    ),
    (
        "answer_none_of-phrase",
        {"kind": "answer_none_of", "phrases": ["north region"]},
        with_answer("The northern region."),
        with_answer("The North\n region grew."),
    ),
    (
        "answer_none_of-scope-messages",
        {"kind": "answer_none_of", "phrases": ["delete"], "scope": "messages"},
        with_answer("Archived.", says=("Shall I archive it?",)),
        with_answer("Archived.", says=("Shall I delete it?",)),
    ),
]


def none_of(*phrases: str, **fields) -> dict:
    return {"kind": "answer_none_of", "phrases": list(phrases), **fields}


@pytest.mark.parametrize(("fields", "passing", "failing"), cases(ROWS))
def test_evaluate(fields, passing, failing):
    assert_pass_fail(fields, passing, failing)


def test_registry_entry():
    # holds on a run that says nothing by design, like the other guards
    assert registered("answer_none_of") == {
        "hooks": {"recompute"},
        "guard": True,
        "answer": True,
        "evidence_for": set(),
    }


@pytest.mark.parametrize(
    ("answer", "passed"),
    [
        ("We should go with Paris.", True),
        ("Lyon is not an option, pick Paris.", True),
        ("We should not choose Lyon; Paris it is.", True),
        ("Paris rather than Lyon.", True),
        ("Lyon was ruled out early.", True),
        ("Lyonnais cuisine is great in Paris.", True),  # whole words only
        ("Paris or Lyon, both work.", False),
        ("Not Paris but Lyon.", False),  # "but" ends the negated clause
        ("There is no doubt: Lyon.", False),
        ("Paris, Lyon, Nice: all fine.", False),  # listing every candidate names the wrong ones
        ("I wouldn't pick Paris, Lyon is better.", False),
    ],
)
def test_negated_mentions_do_not_count(answer, passed):
    assert holds(none_of("Lyon"), episode(answer=answer)) is passed


def test_a_blank_phrase_is_refused():
    with pytest.raises(ValidationError, match="every phrase needs a word"):
        check(**none_of("Lyon", "  "))


def test_recompute_keeps_the_phrases_the_oracle_does_not_name():
    ev = episode(answer="Lyon, not Nice.")
    assert recompute(none_of("Lyon", "Nice", "Rome"), ev) == {"id": "chk-answer_none_of", **none_of("Nice", "Rome")}
    assert recompute(none_of("Lyon"), ev) is DROP
