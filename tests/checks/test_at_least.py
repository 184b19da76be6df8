"""`at_least`: k of N members hold; k within 1..N; undecided while members not graded could still tip it."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from coworkenv.checks import CHECKS, evaluate
from tests.support.builders import check
from tests.support.checks import Row, assert_pass_fail, cases, episode, fix, move, registered, with_state
from tests.support.groups import NO_JUDGE, not_graded

M1 = {"id": "m1-archived", "kind": "mail_in_folder", "ids": ["m1"], "folder": "archive"}
M2 = {"id": "m2-archived", "kind": "mail_in_folder", "ids": ["m2"], "folder": "archive"}
M3 = {"id": "m3-archived", "kind": "mail_in_folder", "ids": ["m3"], "folder": "archive"}
TWO_OF_THREE = {"kind": "at_least", "k": 2, "checks": [M1, M2, M3]}

ROWS: list[Row] = [
    (
        "at_least",
        TWO_OF_THREE,
        with_state(move("m1", "archive"), move("m3", "archive")),
        with_state(move("m2", "archive")),
    ),
    (
        "at_least-all",
        {"kind": "at_least", "k": 1, "checks": [M1]},
        with_state(move("m1", "archive")),
        with_state(move("m2", "archive")),
    ),
]


@pytest.mark.parametrize(("fields", "passing", "failing"), cases(ROWS))
def test_evaluate(fields, passing, failing):
    assert_pass_fail(fields, passing, failing)


def test_registry_entry():
    assert registered("at_least") == {
        "hooks": {"references", "recompute", "strengthen", "fix_reference", "leaks"},
        "guard": False,
        "answer": False,
        "evidence_for": set(),
    }
    assert CHECKS.get("at_least").group


@pytest.mark.parametrize(
    ("k", "error"),
    [(0, "greater than or equal to 1"), (4, "k = 4 is more than its 3 nested check"), (-1, "greater than")],
)
def test_k_is_within_the_members(k, error):
    with pytest.raises(ValidationError, match=error):
        check(**{**TWO_OF_THREE, "k": k})


def test_not_graded_members_leave_it_undecided_until_the_graded_ones_decide(monkeypatch):
    number = {"id": "n", "kind": "answer_number", "value": 7}
    group = check(kind="at_least", k=2, checks=[M1, M2, number])
    with not_graded(monkeypatch, "answer_number"):
        assert evaluate(group, episode(move("m1", "archive"), move("m2", "archive")))[0] is True  # 2 graded passes
        assert evaluate(group, episode(move("m3", "archive")))[0] is False  # 0 passes, only 1 could still come
        passed, reason = evaluate(group, episode(move("m1", "archive")))
        assert passed is None and reason == f"1 of 3 hold (need 2); not graded: n: {NO_JUDGE}"


def test_fix_reference_keeps_k_members():
    gone = {"id": "gone", "kind": "file_exists", "path": "nowhere.txt"}
    reason, data, _ = fix({"kind": "at_least", "k": 2, "checks": [M1, M2, gone]})
    assert reason is None and [m["id"] for m in data["checks"]] == ["m1-archived", "m2-archived"]
    reason, data, _ = fix({"kind": "at_least", "k": 2, "checks": [M1, gone]})
    assert reason is not None and len(data["checks"]) == 2  # removing it would leave fewer than k: the group goes
