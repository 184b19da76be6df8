"""`any_of`: one member holding is enough; a graded pass decides even when another member is not graded."""

from __future__ import annotations

import pytest

from coworkenv.checks import CHECKS, evaluate, is_answer, is_guard
from tests.support.builders import check
from tests.support.checks import (
    Row,
    assert_pass_fail,
    cases,
    episode,
    move,
    registered,
    unchanged_state,
    with_answer,
    with_state,
)
from tests.support.groups import NO_JUDGE, not_graded

ARCHIVED = {"id": "archived", "kind": "mail_in_folder", "ids": ["m1"], "folder": "archive"}
TRASHED = {"id": "trashed", "kind": "mail_in_folder", "ids": ["m1"], "folder": "trash"}
SAID = {"id": "said", "kind": "answer_contains", "text": "archived"}
NUMBER = {"id": "n", "kind": "answer_number", "value": 7}

ROWS: list[Row] = [
    (
        "any_of",
        {"kind": "any_of", "checks": [ARCHIVED, TRASHED]},
        with_state(move("m1", "trash")),
        with_state(move("m2", "trash")),
    ),
    (
        "any_of-answers",
        {"kind": "any_of", "checks": [SAID, NUMBER]},
        with_answer("Invoice 7 paid"),
        with_answer("Done."),
    ),
]


@pytest.mark.parametrize(("fields", "passing", "failing"), cases(ROWS))
def test_evaluate(fields, passing, failing):
    assert_pass_fail(fields, passing, failing)


def test_registry_entry():
    assert registered("any_of") == {
        "hooks": {"references", "recompute", "strengthen", "fix_reference", "leaks"},
        "guard": False,
        "answer": False,
        "evidence_for": set(),
    }
    assert CHECKS.get("any_of").group


def test_reasons():
    assert evaluate(check(kind="any_of", checks=[ARCHIVED, TRASHED]), episode(move("m1", "trash")))[1].startswith(
        "trashed holds:"
    )
    passed, reason = evaluate(check(kind="any_of", checks=[ARCHIVED, TRASHED]), unchanged_state())
    assert passed is False and reason.startswith("none of 2 holds: archived:") and "trashed:" in reason


def test_a_graded_pass_decides_despite_a_member_not_graded(monkeypatch):
    with not_graded(monkeypatch, "answer_number"):
        group = check(kind="any_of", checks=[ARCHIVED, NUMBER])
        assert evaluate(group, episode(move("m1", "archive")))[0] is True
        assert evaluate(group, unchanged_state()) == (None, f"not graded: n: {NO_JUDGE}")


def test_flags_are_the_members():
    # a group is a guard (answer) check when all its members are; one effect member makes it discriminate
    guard = {"id": "g", "kind": "tool_not_called", "tool": "mail_delete"}
    assert is_guard(check(kind="any_of", checks=[guard, {**guard, "id": "g2"}]))
    assert not is_guard(check(kind="any_of", checks=[guard, ARCHIVED]))
    assert is_answer(check(kind="any_of", checks=[SAID, NUMBER])) and not is_answer(
        check(kind="any_of", checks=[SAID, ARCHIVED])
    )
    nested = {"kind": "all_of", "checks": [{"id": "inner", "kind": "any_of", "checks": [SAID]}, NUMBER]}
    assert is_answer(check(**nested)) and is_answer(nested)  # plain data too, as the repairers hold it
