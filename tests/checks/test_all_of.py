"""`all_of`: every member holds; nested groups; a member that is not graded; the hooks it delegates to its members."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from coworkenv.checks import CHECKS, DROP
from tests.support.builders import check, ok
from tests.support.checks import (
    Row,
    as_data,
    assert_pass_fail,
    cases,
    episode,
    fix,
    holds,
    leaked,
    missing,
    move,
    recompute,
    registered,
    strengthen,
    unchanged_state,
    with_answer,
    with_state,
)
from tests.support.groups import not_graded

ARCHIVED = {"id": "archived", "kind": "mail_in_folder", "ids": ["m1"], "folder": "archive"}
SAID = {"id": "said", "kind": "answer_contains", "text": "archived"}
NO_DELETE = {"id": "no-delete", "kind": "tool_not_called", "tool": "mail_delete"}

ROWS: list[Row] = [
    ("all_of", {"kind": "all_of", "checks": [SAID, NO_DELETE]}, with_answer("Archived it"), with_answer("Done.")),
    (
        "all_of-nested",
        {"kind": "all_of", "checks": [ARCHIVED, {"id": "either", "kind": "any_of", "checks": [SAID, NO_DELETE]}]},
        with_state(move("m1", "archive")),
        with_state(move("m2", "archive")),
    ),
]


@pytest.mark.parametrize(("fields", "passing", "failing"), cases(ROWS))
def test_evaluate(fields, passing, failing):
    assert_pass_fail(fields, passing, failing)


def test_registry_entry():
    # a group's flags are its members' (`is_guard`, `is_answer`); every hook delegates to them
    assert registered("all_of") == {
        "hooks": {"references", "recompute", "strengthen", "fix_reference", "leaks"},
        "guard": False,
        "answer": False,
        "evidence_for": set(),
    }
    assert CHECKS.get("all_of").group


def test_the_reason_names_the_failing_member():
    from coworkenv.checks import evaluate

    passed, reason = evaluate(check(kind="all_of", checks=[SAID, ARCHIVED]), episode(answer="archived"))
    assert passed is False and reason.startswith("1 of 2 fail: archived:")


def test_a_graded_failure_decides_despite_a_member_not_graded(monkeypatch):
    with not_graded(monkeypatch, "answer_number"):
        ungraded = {"id": "n", "kind": "answer_number", "value": 3}
        group = {"kind": "all_of", "checks": [ARCHIVED, ungraded]}
        from coworkenv.checks import evaluate

        assert evaluate(check(**group), unchanged_state())[0] is False
        passed, reason = evaluate(check(**group), episode(move("m1", "archive")))
        assert passed is None and reason == "not graded: n: not graded: no judge configured"


@pytest.mark.parametrize(
    ("members", "error"),
    [
        ([], "at least 1 item"),
        ([{**SAID, "requires": ["archived"]}], "`requires` names top-level checks; put it on the group"),
    ],
)
def test_members_are_validated(members, error):
    with pytest.raises(ValidationError, match=error):
        check(kind="all_of", checks=members)


def test_nesting_is_capped():
    from coworkenv.caps import CAPS

    group: dict = SAID
    for level in range(CAPS.check_depth):
        group = {"id": f"g{level}", "kind": "all_of", "checks": [group]}
    check(**group)  # exactly at the cap
    with pytest.raises(ValidationError, match="nested deeper than 4 levels"):
        check(kind="all_of", checks=[group])


def test_references_point_into_the_group():
    fields = {
        "kind": "all_of",
        "checks": [SAID, {"id": "gone", "kind": "mail_in_folder", "ids": ["m404"], "folder": "archive"}],
    }
    assert missing(fields) == [("m404", "no such mail id, initially or after the oracle", ".checks[1]")]


def test_fix_reference_fixes_the_member_in_place():
    fields = {"kind": "all_of", "checks": [SAID, {"id": "sent", "kind": "tool_called", "tool": "mail_sendd"}]}
    reason, data, _ = fix(fields)
    assert reason is None and data["checks"][1]["tool"] == "mail_send"


def test_fix_reference_removes_an_unfixable_member_or_drops_a_lone_one():
    gone = {"id": "gone", "kind": "file_exists", "path": "nowhere.txt"}
    reason, data, fixing = fix({"kind": "all_of", "checks": [SAID, gone]})
    assert (
        reason is None and [m["id"] for m in data["checks"]] == ["said"] and "member gone removed" in fixing.notes[-1]
    )
    reason, data, _ = fix({"kind": "all_of", "checks": [gone]})
    assert reason is not None and "gone" in reason and len(data["checks"]) == 1


def test_recompute_recomputes_the_members_the_oracle_fails():
    ev = episode(calls=(ok(0, "mail_move"),), answer="I archived it.")
    moved = {"id": "moved", "kind": "tool_called", "tool": "mail_move", "min": 3}
    fixed = recompute({"kind": "all_of", "checks": [SAID, moved]}, ev)
    assert fixed == {**as_data({"kind": "all_of"}), "checks": [SAID, {**moved, "min": 1}]} and holds(fixed, ev)
    # a member the oracle never produces goes; the group goes with its last member
    nope = {"id": "nope", "kind": "answer_contains", "any_of": ["south"]}
    assert recompute({"kind": "all_of", "checks": [SAID, nope]}, ev)["checks"] == [SAID]
    assert recompute({"kind": "all_of", "checks": [nope]}, ev) is DROP


def test_strengthen_strengthens_the_members():
    fields = {"kind": "all_of", "checks": [{"id": "called", "kind": "tool_called", "tool": "mail_move", "min": 0}]}
    stronger = strengthen(fields, episode())
    assert stronger["checks"][0]["min"] == 1
    assert strengthen({"kind": "all_of", "checks": [SAID]}, episode()) is None


def test_leaks_are_the_members():
    fields = {"kind": "all_of", "checks": [{"id": "n", "kind": "answer_number", "value": 1250}, NO_DELETE]}
    assert leaked(fields, "The total is 1,250; tell me.") == ["1,250"]
