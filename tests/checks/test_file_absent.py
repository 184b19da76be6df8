"""`file_absent`: a passing and a failing evidence; its `references` hook through the registry ("never create X" is a
legitimate check, so a path that exists nowhere is no missing reference)."""

from __future__ import annotations

import pytest

from tests.support.checks import (
    Row,
    assert_pass_fail,
    cases,
    del_file,
    missing,
    registered,
    unchanged_state,
    with_state,
)

ROWS: list[Row] = [
    (
        "file_absent",
        {"kind": "file_absent", "path": "archive/old.txt"},
        with_state(del_file("archive/old.txt")),
        unchanged_state,
    ),
]


@pytest.mark.parametrize(("fields", "passing", "failing"), cases(ROWS))
def test_evaluate(fields, passing, failing):
    assert_pass_fail(fields, passing, failing)


def test_registry_entry():
    # no recompute hook: the oracle repairer drops a presence/absence check the oracle fails
    assert registered("file_absent") == {
        "hooks": {"references"},
        "guard": False,
        "answer": False,
        "evidence_for": {"data_analysis"},
    }


@pytest.mark.parametrize(
    ("path", "found"),
    [
        ("archive/old.txt", []),
        ("out/never-written.txt", []),
        ("./out/x.txt", [("./out/x.txt", "path is not relative and normalized", "")]),
    ],
)
def test_references_only_check_the_path_is_well_formed(path, found):
    assert missing({"kind": "file_absent", "path": path}) == found
