"""`asked_user`: passing and failing evidence; its `recompute` hook and `evidence_for` flag through the registry."""

from __future__ import annotations

import pytest

from coworkenv.checks import DROP
from tests.support.builders import make_spec
from tests.support.checks import Row, assert_pass_fail, cases, episode, holds, recompute, registered, with_answer

ROWS: list[Row] = [
    (
        "asked_user",
        {"kind": "asked_user", "about": ["budget", "deadline"]},
        with_answer("ok", ("What is the DEADLINE?",)),
        with_answer("the deadline is friday"),
    ),  # the final answer is not a question to the user
    (
        "asked_user-str",
        {"kind": "asked_user", "about": "room"},
        with_answer("ok", ("hi", "which room?")),
        with_answer("ok", ("hi",)),
    ),
]

USER = {"facts": {"room": "Atlas"}, "reveal": [{"when_any": ["Room", "floor"], "say": "Room Atlas, floor 3"}]}


@pytest.mark.parametrize(("fields", "passing", "failing"), cases(ROWS))
def test_evaluate(fields, passing, failing):
    assert_pass_fail(fields, passing, failing)


def test_registry_entry():
    assert registered("asked_user") == {
        "hooks": {"recompute"},
        "guard": False,
        "answer": False,
        "evidence_for": {"multi_turn"},
    }


@pytest.mark.parametrize(
    ("about", "user", "recomputed"),
    [
        (["budget", "deadline"], None, ["deadline"]),
        ("date", USER, ["Room", "floor"]),  # the user's reveal keywords count too
        (["floor", "when"], USER, ["floor", "Room"]),  # each keyword once, the check's first
    ],
)
def test_recompute_keeps_the_keywords_the_oracle_asked_about(about, user, recomputed):
    ev = episode(answer="booked", says=("Which room and floor, and by what DEADLINE?",))
    fixed = recompute({"kind": "asked_user", "about": about}, ev, make_spec(user=user) if user else make_spec())
    assert fixed == {"id": "chk-asked_user", "kind": "asked_user", "about": recomputed} and holds(fixed, ev)


def test_recompute_drops_a_question_the_oracle_never_asks():
    ev = episode(answer="the deadline is friday", says=("hello",))
    assert recompute({"kind": "asked_user", "about": "deadline"}, ev, make_spec(user=USER)) is DROP
