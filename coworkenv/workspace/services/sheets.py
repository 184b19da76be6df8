"""sheets: named tables of columns and rows; cells are addressed by 0-based row and column name."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pydantic import Field

from coworkenv.frozen import EMPTY_LIST
from coworkenv.workspace.record_types import Record, Scalar
from coworkenv.workspace.service import Service, added_removed, register_service
from coworkenv.workspace.tool_errors import ToolError
from coworkenv.workspace.tools import Args, Short, tool

if TYPE_CHECKING:
    from coworkenv.workspace.runtime import Workspace

MAX_ROWS = 10_000


class Sheet(Record):
    columns: list[str]
    rows: list[list[Scalar]] = EMPTY_LIST


def diff_sheets(before: dict[str, dict], after: dict[str, dict]) -> dict[str, Any]:
    """Per changed sheet: the cells that differ (row, column, old, new) and the rows appended."""
    changed = {}
    for name in sorted(before.keys() & after.keys()):
        old, new = before[name], after[name]
        if old == new:
            continue
        columns = new["columns"]
        cells = [
            [r, columns[c], old["rows"][r][c], new["rows"][r][c]]
            for r in range(min(len(old["rows"]), len(new["rows"])))
            for c in range(len(columns))
            if old["rows"][r][c] != new["rows"][r][c]
        ]
        changed[name] = {"cells": cells, "rows_added": new["rows"][len(old["rows"]) :]}
    return {**added_removed(before, after), "changed": changed}


def add_sheet(d: Any, name: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    d.state["sheets"][name] = {"columns": list(columns), "rows": [list(r) for r in rows]}
    return name


SERVICE = register_service(
    Service(
        name="sheets",
        writes="authoring",
        state=dict[str, Sheet],
        description="Named tables of columns and rows.",
        diff=diff_sheets,
        draft={"add_sheet": add_sheet},
        targets=lambda state, argument: sorted(state["sheets"]),
    )
)


class NoArgs(Args):
    pass


class SheetArgs(Args):
    sheet: Short


class UpdateArgs(Args):
    sheet: Short
    row: int = Field(ge=0)
    column: Short
    value: Scalar


class AppendArgs(Args):
    sheet: Short
    row: list[Scalar]


def _sheet(ws: Workspace, name: str) -> dict:
    sheet = ws.state["sheets"].get(name)
    if sheet is None:
        raise ToolError(404, f"sheet {name!r} not found")
    return sheet


def _check_value(ws: Workspace, value: Scalar) -> None:
    if isinstance(value, str):
        ws.check_text_size(value, "value")


@tool("read", NoArgs)
def sheets_list(ws: Workspace, a: NoArgs) -> dict:
    """List the sheets with their columns and row counts."""
    sheets = ws.state["sheets"]
    return {
        "sheets": [
            {"name": n, "columns": list(s["columns"]), "rows": len(s["rows"])} for n, s in sorted(sheets.items())
        ]
    }


@tool("read", SheetArgs, target="sheet")
def sheets_read(ws: Workspace, a: SheetArgs) -> dict:
    """Read a whole sheet: its columns and rows (row 0 is the first data row)."""
    sheet = _sheet(ws, a.sheet)
    return {"sheet": a.sheet, "columns": list(sheet["columns"]), "rows": [list(r) for r in sheet["rows"]]}


@tool("write", UpdateArgs, target="sheet")
def sheets_update(ws: Workspace, a: UpdateArgs) -> dict:
    """Set one cell: `row` is the 0-based data row index, `column` the column name."""
    sheet = _sheet(ws, a.sheet)
    if a.row >= len(sheet["rows"]):
        raise ToolError(404, f"row {a.row} not found; sheet {a.sheet!r} has {len(sheet['rows'])} rows")
    if a.column not in sheet["columns"]:
        raise ToolError(404, f"column {a.column!r} not found; columns are {sheet['columns']}")
    _check_value(ws, a.value)
    sheet["rows"][a.row][sheet["columns"].index(a.column)] = a.value
    return {"sheet": a.sheet, "row": a.row, "column": a.column, "value": a.value}


@tool("write", AppendArgs, target="sheet")
def sheets_append(ws: Workspace, a: AppendArgs) -> dict:
    """Append a row: a list of values in column order."""
    sheet = _sheet(ws, a.sheet)
    if len(a.row) != len(sheet["columns"]):
        raise ToolError(400, f"row has {len(a.row)} values; sheet {a.sheet!r} has {len(sheet['columns'])} columns")
    if len(sheet["rows"]) >= MAX_ROWS:
        raise ToolError(400, "the sheet is full")
    for value in a.row:
        _check_value(ws, value)
    sheet["rows"].append(list(a.row))
    return {"sheet": a.sheet, "row": len(sheet["rows"]) - 1}
