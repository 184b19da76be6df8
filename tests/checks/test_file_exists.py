"""`file_exists`: a passing and a failing evidence; its `references` and `strengthen` hooks through the registry."""

from __future__ import annotations

import pytest

from tests.support.checks import (
    Row,
    assert_pass_fail,
    cases,
    del_file,
    episode,
    missing,
    only_after,
    registered,
    set_file,
    strengthen,
    unchanged_state,
    with_state,
)

NOWHERE = "file exists nowhere: not initially, not after the oracle, not in any solution step"

ROWS: list[Row] = [
    (
        "file_exists",
        {"kind": "file_exists", "path": "out/a.txt"},
        with_state(set_file("out/a.txt", "")),
        unchanged_state,
    ),
]


@pytest.mark.parametrize(("fields", "passing", "failing"), cases(ROWS))
def test_evaluate(fields, passing, failing):
    assert_pass_fail(fields, passing, failing)


def test_registry_entry():
    assert registered("file_exists") == {
        "hooks": {"references", "strengthen"},
        "guard": False,
        "answer": False,
        "evidence_for": {"data_analysis"},
    }


@pytest.mark.parametrize(
    ("path", "oracle", "named", "found"),
    [
        ("notes/todo.txt", (), (), []),
        ("out/a.txt", (set_file("out/a.txt", ""),), (), []),
        ("out/a.txt", (), ("out/a.txt",), []),  # a solution step writes it: enough even before the oracle ran
        ("out/a.txt", (), (), [("out/a.txt", NOWHERE, "")]),
        ("out/../a.txt", (), (), [("out/../a.txt", "path is not relative and normalized", "")]),
        (
            "/etc/passwd",
            (set_file("etc/passwd", ""),),
            (),
            [("/etc/passwd", "path is not relative and normalized", "")],
        ),
    ],
)
def test_references(path, oracle, named, found):
    assert missing({"kind": "file_exists", "path": path}, *oracle, named_paths=named) == found


def test_strengthen_asks_for_the_first_line_the_oracle_added():
    ev = episode(set_file("notes/todo.txt", "buy milk\n\n  buy eggs  \ncall Ana\n"))
    stronger = strengthen({"kind": "file_exists", "path": "notes/todo.txt"}, ev)
    assert stronger == {"id": "chk-file_exists", "kind": "file_contains", "path": "notes/todo.txt", "text": "buy eggs"}
    assert only_after(stronger, ev)


@pytest.mark.parametrize(
    "oracle",
    [(), (del_file("notes/todo.txt"),), (set_file("notes/todo.txt", "  buy milk"),)],
    ids=["untouched", "deleted", "nothing-added"],
)
def test_strengthen_gives_up_without_an_added_line(oracle):
    assert strengthen({"kind": "file_exists", "path": "notes/todo.txt"}, episode(*oracle)) is None
