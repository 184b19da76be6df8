"""`csv_cell`: passing and failing evidence; its `references` and `recompute` hooks through the registry."""

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

TOO_LONG = "region,revenue\n" + "x" * 200_000 + ",1\n"
"""A field beyond the csv module's field limit: the file does not parse."""

ROWS: list[Row] = [
    (
        "csv_cell-value",
        {
            "kind": "csv_cell",
            "path": "reports/q3.csv",
            "match": {"region": "NORTH"},
            "column": "revenue",
            "value": 120.0,
            "tol": 0.5,
        },
        unchanged_state,
        with_state(set_file("reports/q3.csv", "region,revenue\nnorth,121\n")),
    ),
    (
        "csv_cell-equals",
        {"kind": "csv_cell", "path": "reports/q3.csv", "match": {"region": "south"}, "column": "revenue", "equals": 80},
        unchanged_state,
        with_state(set_file("reports/q3.csv", "region,revenue\nsouth,eighty\n")),
    ),
    (
        "csv_cell-no-row",
        {"kind": "csv_cell", "path": "reports/q3.csv", "match": {"region": "east"}, "column": "revenue", "equals": "1"},
        with_state(set_file("reports/q3.csv", "region,revenue\neast,1\n")),
        unchanged_state,
    ),
    (
        "csv_cell-not-csv",
        {
            "kind": "csv_cell",
            "path": "reports/q3.csv",
            "match": {"region": "north"},
            "column": "revenue",
            "equals": 120,
        },
        unchanged_state,
        with_state(set_file("reports/q3.csv", TOO_LONG)),
    ),
]

NORTH = {"kind": "csv_cell", "path": "reports/q3.csv", "match": {"region": "north"}, "column": "revenue"}


@pytest.mark.parametrize(("fields", "passing", "failing"), cases(ROWS))
def test_evaluate(fields, passing, failing):
    assert_pass_fail(fields, passing, failing)


def test_registry_entry():
    assert registered("csv_cell") == {
        "hooks": {"references", "recompute"},
        "guard": False,
        "answer": False,
        "evidence_for": {"data_analysis"},
    }


def test_references_name_the_file():
    assert missing({**NORTH, "equals": 1}) == []
    assert missing({**NORTH, "path": "out/r.csv", "equals": 1}, set_file("out/r.csv", "region,revenue\n")) == []
    assert [ref for ref, _, _ in missing({**NORTH, "path": "out/r.csv", "equals": 1})] == ["out/r.csv"]


@pytest.mark.parametrize(
    ("expected", "written", "recomputed"),
    [
        ({"value": 1.0, "tol": 0.5}, "150", {"value": 150, "tol": 0.5}),  # a number stays a number, as an int
        ({"value": 1.0}, "150.25", {"value": 150.25}),
        ({"value": 1.0, "tol": 0.5}, "n/a", {"equals": "n/a"}),  # no longer a number: compared as text
        ({"equals": 1}, "150", {"equals": "150"}),
        ({"equals": "x"}, "", {"equals": ""}),
    ],
)
def test_recompute_reads_the_oracles_cell(expected, written, recomputed):
    ev = episode(set_file("reports/q3.csv", f"region,revenue\nnorth,{written}\nsouth,80\n"))
    fixed = recompute({**NORTH, **expected}, ev)
    assert fixed == {"id": "chk-csv_cell", **NORTH, **recomputed} and holds(fixed, ev)


@pytest.mark.parametrize(
    ("oracle", "result"),
    [
        (del_file("reports/q3.csv"), DROP),
        (set_file("reports/q3.csv", TOO_LONG), DROP),
        (set_file("reports/q3.csv", "region,revenue\nsouth,80\n"), None),  # no row to read from
        (set_file("reports/q3.csv", "region,total\nnorth,80\n"), None),  # no such column
    ],
    ids=["deleted", "not-csv", "no-row", "no-column"],
)
def test_recompute_without_a_cell(oracle, result):
    assert recompute({**NORTH, "value": 1.0}, episode(oracle)) is result
