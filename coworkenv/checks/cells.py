"""Cell checks (`csv_cell`, `sheet_cell`): a row found by `match`, one of its columns compared by value.

Sheet values are typed and CSV values are text, so numbers compare as numbers and text case-insensitively.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from functools import partial
from typing import Any, Self

from pydantic import Field, model_validator

from coworkenv.checks.base import DROP, CheckBase, Outcome
from coworkenv.checks.text import as_number
from coworkenv.memo import by_identity
from coworkenv.workspace.record_types import Scalar

Rows = list[dict[str, Any]]


class CellCheck(CheckBase):
    match: dict[str, Scalar]
    column: str
    equals: Scalar = None
    value: float | None = None
    tol: float = Field(default=1e-6, ge=0)

    @model_validator(mode="after")
    def _one(self) -> Self:
        if (self.equals is None) == (self.value is None):
            raise ValueError("give exactly one of equals, value")
        return self


def cell_equals(actual: Any, expected: Any) -> bool:
    if expected is None:
        return actual is None or (isinstance(actual, str) and actual.strip() == "")
    if isinstance(expected, bool):
        return actual is expected or (isinstance(actual, str) and actual.strip().lower() == str(expected).lower())
    if isinstance(expected, int | float):
        number = as_number(actual)
        return number is not None and abs(number - expected) <= 1e-9 * max(1.0, abs(expected))
    return _same_text(actual, str(expected).strip().lower())


def _same_text(actual: Any, want: str) -> bool:
    """A text, integer or float cell whose text, stripped and lowercased, is `want`."""
    return isinstance(actual, str | int | float) and str(actual).strip().lower() == want


def cell_test(expected: Any) -> Callable[[Any], bool]:
    """`cell_equals(·, expected)` with the expected side's own work (normalizing text) done once."""
    if not isinstance(expected, str):
        return partial(_cell_equals_to, expected)
    return partial(_same_text, want=expected.strip().lower())


def _cell_equals_to(expected: Any, actual: Any) -> bool:
    return cell_equals(actual, expected)


@by_identity(4096)
def _match_tests(match: dict[str, Any]) -> tuple[tuple[str, Callable[[Any], bool]], ...]:
    """A `sheet_cell` check's `match` compiled once: frozen spec data, tested against every row of every episode
    (never pass it data that may still change)."""
    return tuple((key, cell_test(value)) for key, value in match.items())


def csv_rows(content: str) -> Rows:
    """The CSV's rows as dicts, header names stripped; raises csv.Error."""
    return [{(k or "").strip(): v for k, v in r.items()} for r in csv.DictReader(io.StringIO(content))]


def sheet_rows(sheet: dict[str, Any]) -> Rows:
    return [dict(zip(sheet["columns"], row, strict=False)) for row in sheet["rows"]]


def matching_rows(match: dict[str, Any], rows: Rows) -> Rows:
    return [r for r in rows if all(k in r and cell_equals(r[k], v) for k, v in match.items())]


def matching_sheet_rows(match: dict[str, Any], sheet: dict[str, Any]) -> Rows:
    """`matching_rows(match, sheet_rows(sheet))`, reading the cells by column position so that only the rows that
    match become dicts. Duplicate column names (the last one wins in a row's dict) take the plain way."""
    columns = sheet["columns"]
    if len(set(columns)) != len(columns):
        return matching_rows(match, sheet_rows(sheet))
    if any(k not in columns for k in match):
        return []
    at = [(columns.index(k), test) for k, test in _match_tests(match)]
    if len(at) == 1:  # the common case, without a generator per row
        ((i, test),) = at
        return [dict(zip(columns, row, strict=False)) for row in sheet["rows"] if i < len(row) and test(row[i])]
    return [
        dict(zip(columns, row, strict=False))
        for row in sheet["rows"]
        if all(i < len(row) and test(row[i]) for i, test in at)
    ]


def cell_outcome(check: CellCheck, matching: Rows, where: str) -> Outcome:
    """The outcome on the rows `check.match` selects."""
    if not matching:
        return False, f"no row in {where} matches {check.match}"
    values = [r.get(check.column) for r in matching]
    for value in values:
        if check.value is not None:
            number = as_number(value)
            if number is not None and abs(number - check.value) <= check.tol:
                return True, f"{where}[{check.column}] = {value!r}"
        elif cell_equals(value, check.equals):
            return True, f"{where}[{check.column}] = {value!r}"
    expected = check.equals if check.value is None else f"{check.value} ± {check.tol}"
    return False, f"{where}[{check.column}] is {values[0]!r}, expected {expected!r}"


def recompute_cell(check: dict[str, Any], rows: Rows | None) -> Any:
    """The expected value read from the oracle's rows: a number stays a `value`, anything else becomes `equals`."""
    if rows is None:
        return DROP
    matching = matching_rows(check["match"], rows)
    if not matching or check["column"] not in matching[0]:
        return None
    actual = matching[0][check["column"]]
    new = dict(check)
    number = as_number(actual) if check.get("value") is not None else None
    if number is not None:
        new["value"] = int(number) if float(number).is_integer() and abs(number) < 2**53 else number
    else:
        new.pop("value", None)
        new.pop("tol", None)
        new["equals"] = actual
    return new
