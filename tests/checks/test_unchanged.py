"""`unchanged`: passing and failing evidence; its `references` hook (only a path names something) and its `guard`
flag through the registry."""

from __future__ import annotations

import pytest

from tests.support.checks import Row, assert_pass_fail, cases, del_event, del_file, missing, registered, set_file, unchanged_state, with_state

NOWHERE = "file exists nowhere: not initially, not after the oracle, not in any solution step"

ROWS: list[Row] = [
    ("unchanged-service", {"kind": "unchanged", "service": "calendar"}, with_state(set_file("x", "y")), with_state(del_event("e1"))),
    ("unchanged-path", {"kind": "unchanged", "path": "notes/todo.txt"}, with_state(set_file("other.txt", "x")),
     with_state(set_file("notes/todo.txt", "x"))),
    ("unchanged-path-deleted", {"kind": "unchanged", "path": "notes/todo.txt"}, unchanged_state, with_state(del_file("notes/todo.txt"))),
]  # fmt: skip


@pytest.mark.parametrize(("fields", "passing", "failing"), cases(ROWS))
def test_evaluate(fields, passing, failing):
    assert_pass_fail(fields, passing, failing)


def test_registry_entry():
    # a guard: it holds on an untouched workspace by design, so no repairer strengthens or drops it for that
    assert registered("unchanged") == {"hooks": {"references"}, "guard": True, "answer": False, "evidence_for": set()}


@pytest.mark.parametrize(
    ("fields", "found"),
    [
        ({"service": "chat"}, []),
        ({"path": "notes/todo.txt"}, []),
        ({"path": "nowhere/at/all.txt"}, [("nowhere/at/all.txt", NOWHERE, "")]),
        ({"path": "notes//todo.txt"}, [("notes//todo.txt", "path is not relative and normalized", "")]),
    ],
)
def test_references(fields, found):
    assert missing({"kind": "unchanged", **fields}) == found
