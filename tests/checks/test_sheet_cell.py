"""`sheet_cell`: passing and failing evidence; its `references`, `recompute` and `fix_reference` hooks through the
registry."""

from __future__ import annotations

import pytest

from coworkenv.checks import DROP
from tests.support.checks import (
    Row,
    add_sheet,
    assert_pass_fail,
    cases,
    cell,
    episode,
    fix,
    holds,
    missing,
    recompute,
    registered,
    unchanged_state,
    with_state,
)

ROWS: list[Row] = [
    (
        "sheet_cell-equals",
        {"kind": "sheet_cell", "sheet": "budget", "match": {"item": "desks"}, "column": "amount", "equals": 1750},
        with_state(cell("budget", 1, 1, 1750)),
        unchanged_state,
    ),
    (
        "sheet_cell-value-tol",
        {
            "kind": "sheet_cell",
            "sheet": "budget",
            "match": {"item": "desks"},
            "column": "amount",
            "value": 1500.0,
            "tol": 0.01,
        },
        with_state(cell("budget", 1, 1, "1,500.00")),
        with_state(cell("budget", 1, 1, 1500.5)),
    ),
    (
        "sheet_cell-missing-sheet",
        {"kind": "sheet_cell", "sheet": "nope", "match": {"a": 1}, "column": "a", "equals": 1},
        with_state(add_sheet("nope", ["a"], [[1]])),
        unchanged_state,
    ),
]

DESKS = {"kind": "sheet_cell", "sheet": "budget", "match": {"item": "desks"}, "column": "amount", "equals": 1500}
DESKS_CELL = {k: v for k, v in DESKS.items() if k != "equals"}
NO_COLUMN = "no such column in the sheet"


def add_total(s: dict) -> None:
    s["sheets"]["budget"]["columns"].append("total")


@pytest.mark.parametrize(("fields", "passing", "failing"), cases(ROWS))
def test_evaluate(fields, passing, failing):
    assert_pass_fail(fields, passing, failing)


def test_registry_entry():
    assert registered("sheet_cell") == {
        "hooks": {"references", "recompute", "fix_reference"},
        "guard": False,
        "answer": False,
        "evidence_for": {"data_analysis"},
    }


@pytest.mark.parametrize(
    ("changes", "oracle", "found"),
    [
        ({}, (), []),
        ({"sheet": "q4"}, (add_sheet("q4", ["item", "amount"], []),), []),  # the oracle creates it
        ({"sheet": "q4"}, (), [("q4", "no such sheet, initially or after the oracle", "")]),
        (
            {"column": "amout", "match": {"itme": "desks"}},
            (),
            [("budget.itme", NO_COLUMN, ""), ("budget.amout", NO_COLUMN, "")],
        ),
        ({"column": "total"}, (add_total,), []),
    ],
)
def test_references(changes, oracle, found):
    assert missing({**DESKS, **changes}, *oracle) == found


@pytest.mark.parametrize(
    ("expected", "recomputed"),
    [({"equals": 1}, {"equals": 1750}), ({"value": 1.0, "tol": 0.5}, {"value": 1750, "tol": 0.5})],
)
def test_recompute_reads_the_oracles_cell(expected, recomputed):
    ev = episode(cell("budget", 1, 1, 1750))
    fixed = recompute({**DESKS_CELL, **expected}, ev)
    assert fixed == {"id": "chk-sheet_cell", **DESKS_CELL, **recomputed} and holds(fixed, ev)


def test_recompute_without_a_cell():
    assert recompute(DESKS, episode(lambda s: s["sheets"].pop("budget"))) is DROP
    assert recompute({**DESKS, "match": {"item": "chairs"}}, episode()) is None


@pytest.mark.parametrize(
    ("changes", "oracle", "fixed"),
    [
        ({"column": "amout"}, (), {"column": "amount"}),
        ({"match": {"itme": "desks"}}, (), {"match": {"item": "desks"}}),
        ({"column": "totl"}, (add_total,), {"column": "total"}),  # the oracle's column
    ],
)
def test_fix_reference_maps_a_misspelled_column(changes, oracle, fixed):
    reason, check, fixing = fix({**DESKS, **changes}, *oracle)
    assert reason is None and check == {"id": "chk-sheet_cell", **DESKS, **fixed}
    assert len(fixing.notes) == 1 and "→" in fixing.notes[0]


def test_fix_reference_keeps_the_sheet_name_whole():
    # a sheet name may contain a dot: the column is what follows the check's sheet name
    fields = {**DESKS, "sheet": "q3.budget", "column": "amout"}
    reason, check, _ = fix(fields, add_sheet("q3.budget", ["item", "amount"], [["desks", 1]]))
    assert reason is None and check["column"] == "amount"


def test_fix_reference_gives_a_reason_otherwise():
    assert fix({**DESKS, "column": "zzz"})[0] == "sheet 'budget' has no column 'zzz'"
    assert fix({**DESKS, "sheet": "q4"})[0] == "no such sheet, initially or after the oracle"
