"""`file_equals`: passing and failing evidence; its `references` and `recompute` hooks through the registry."""

from __future__ import annotations

import pytest

from coworkenv.checks import DROP
from tests.support.checks import (
    Row,
    assert_pass_fail,
    cases,
    del_file,
    episode,
    holds,
    missing,
    recompute,
    registered,
    set_file,
    unchanged_state,
    with_state,
)

ROWS: list[Row] = [
    (
        "file_equals",
        {"kind": "file_equals", "path": "notes/todo.txt", "content": "buy milk"},
        with_state(set_file("notes/todo.txt", "buy milk  \n\n")),
        with_state(set_file("notes/todo.txt", "buy milk!")),
    ),
    (
        "file_equals-missing",
        {"kind": "file_equals", "path": "nope.txt", "content": ""},
        with_state(set_file("nope.txt", "\n")),
        unchanged_state,
    ),
]


@pytest.mark.parametrize(("fields", "passing", "failing"), cases(ROWS))
def test_evaluate(fields, passing, failing):
    assert_pass_fail(fields, passing, failing)


def test_registry_entry():
    assert registered("file_equals") == {
        "hooks": {"references", "recompute"},
        "guard": False,
        "answer": False,
        "evidence_for": {"data_analysis"},
    }


def test_references():
    assert missing({"kind": "file_equals", "path": "notes/todo.txt", "content": ""}) == []
    assert missing({"kind": "file_equals", "path": "out/r.md", "content": ""}, set_file("out/r.md", "x")) == []
    assert [problem for _, problem, _ in missing({"kind": "file_equals", "path": "out/r.md", "content": ""})] == [
        "file exists nowhere: not initially, not after the oracle, not in any solution step"
    ]


def test_recompute_takes_the_oracles_content():
    fields = {"kind": "file_equals", "path": "notes/todo.txt", "content": "buy bread"}
    ev = episode(set_file("notes/todo.txt", "buy milk\nbuy eggs\n"))
    fixed = recompute(fields, ev)
    assert fixed == {"id": "chk-file_equals", **fields, "content": "buy milk\nbuy eggs\n"} and holds(fixed, ev)


def test_recompute_drops_a_file_the_oracle_never_leaves():
    assert (
        recompute(
            {"kind": "file_equals", "path": "notes/todo.txt", "content": "x"}, episode(del_file("notes/todo.txt"))
        )
        is DROP
    )
