"""`csv_cell`: in a CSV file, the row matching `match` has the expected value in `column`."""

from __future__ import annotations

import csv
from typing import Any, Literal

from coworkenv.checks.base import CheckKind, Evidence, Outcome, register_kind
from coworkenv.checks.cells import CellCheck, cell_outcome, csv_rows, matching_rows, recompute_cell
from coworkenv.checks.files import path_references


class CsvCell(CellCheck):
    kind: Literal["csv_cell"]
    path: str


def evaluate(check: CsvCell, ev: Evidence) -> Outcome:
    content = ev.final_state["files"].get(check.path)
    if content is None:
        return False, f"{check.path} does not exist"
    try:
        rows = csv_rows(content)
    except csv.Error as exc:
        return False, f"{check.path} is not valid CSV: {exc}"
    return cell_outcome(check, matching_rows(check.match, rows), check.path)


def recompute(check: dict[str, Any], ev: Evidence, spec: Any) -> Any:
    content = ev.final_state["files"].get(check["path"])
    try:
        rows = None if content is None else csv_rows(content)
    except csv.Error:
        rows = None
    return recompute_cell(check, rows)


KIND = register_kind(
    CheckKind(
        name="csv_cell",
        model=CsvCell,
        evaluate=evaluate,
        references=lambda check, refs: path_references(check.path, refs),
        recompute=recompute,
        evidence_for=frozenset({"data_analysis"}),
    )
)
