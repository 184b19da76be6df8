"""`file_contains`: passing and failing evidence; its `references`, `recompute` and `strengthen` hooks through the
registry."""

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
    only_after,
    recompute,
    registered,
    set_file,
    strengthen,
    unchanged_state,
    with_state,
)

ROWS: list[Row] = [
    ("file_contains-text", {"kind": "file_contains", "path": "notes/todo.txt", "text": "MILK"}, unchanged_state,
     with_state(set_file("notes/todo.txt", "buy bread"))),
    ("file_contains-missing-file", {"kind": "file_contains", "path": "notes/todo.txt", "text": "milk"}, unchanged_state,
     with_state(del_file("notes/todo.txt"))),
    ("file_contains-case-sensitive", {"kind": "file_contains", "path": "notes/todo.txt", "text": "Milk", "case_sensitive": True},
     with_state(set_file("notes/todo.txt", "buy Milk")), unchanged_state),
    ("file_contains-regex", {"kind": "file_contains", "path": "reports/q3.csv", "regex": r"(?m)^north,1\d\d$"}, unchanged_state,
     with_state(set_file("reports/q3.csv", "region,revenue\nnorth,99\n"))),
    ("file_contains-regex-ci", {"kind": "file_contains", "path": "reports/q3.csv", "regex": "NORTH"}, unchanged_state,
     with_state(set_file("reports/q3.csv", "x"))),
]  # fmt: skip

TODO = {"kind": "file_contains", "path": "notes/todo.txt"}


@pytest.mark.parametrize(("fields", "passing", "failing"), cases(ROWS))
def test_evaluate(fields, passing, failing):
    assert_pass_fail(fields, passing, failing)


def test_registry_entry():
    assert registered("file_contains") == {
        "hooks": {"references", "recompute", "strengthen"}, "guard": False, "answer": False, "evidence_for": {"data_analysis"},
    }  # fmt: skip


def test_references():
    assert missing({**TODO, "text": "milk"}) == []
    assert missing({**TODO, "path": "out/r.md", "text": "x"}, set_file("out/r.md", "x")) == []
    assert [ref for ref, _, _ in missing({**TODO, "path": "out/r.md", "text": "x"})] == ["out/r.md"]


@pytest.mark.parametrize(
    "fields",
    [{**TODO, "text": "bread"}, {**TODO, "regex": "^bread$", "case_sensitive": True}],
    ids=["text", "regex-becomes-text"],
)
def test_recompute_takes_the_first_line_the_oracle_added(fields):
    ev = episode(set_file("notes/todo.txt", "buy milk\nBuy Eggs\ncall Ana\n"))
    fixed = recompute(fields, ev)
    assert fixed["text"] == "Buy Eggs" and "regex" not in fixed and holds(fixed, ev)
    assert fixed.get("case_sensitive") == fields.get("case_sensitive")


def test_recompute_gives_up_or_drops():
    assert recompute({**TODO, "text": "bread"}, episode(del_file("notes/todo.txt"))) is DROP
    assert recompute({**TODO, "text": "bread"}, episode()) is None  # the oracle added nothing to read from


def test_strengthen_replaces_a_check_that_holds_untouched():
    fields = {**TODO, "regex": "MILK", "case_sensitive": False}
    ev = episode(set_file("notes/todo.txt", "buy milk\nbuy eggs\n"))
    stronger = strengthen(fields, ev)
    assert stronger == {"id": "chk-file_contains", **TODO, "text": "buy eggs"}
    assert only_after(stronger, ev)
    assert strengthen(fields, episode()) is None
