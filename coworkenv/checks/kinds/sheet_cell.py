"""`sheet_cell`: in a sheet, the row matching `match` has the expected value in `column`."""

from __future__ import annotations

from typing import Any, Literal

from coworkenv.checks.base import CheckKind, Evidence, Fixing, Outcome, References, register_kind, unfixable
from coworkenv.checks.cells import CellCheck, cell_outcome, matching_sheet_rows, recompute_cell, sheet_rows
from coworkenv.registry import closest

COLUMN_CUTOFF = 0.75


class SheetCell(CellCheck):
    kind: Literal["sheet_cell"]
    sheet: str


def evaluate(check: SheetCell, ev: Evidence) -> Outcome:
    sheet = ev.final_state["sheets"].get(check.sheet)
    if sheet is None:
        return False, f"sheet {check.sheet!r} does not exist"
    return cell_outcome(check, matching_sheet_rows(check.match, sheet), f"sheet {check.sheet!r}")


def references(check: SheetCell, refs: References) -> None:
    sheets = [s for s in (state.get("sheets", {}).get(check.sheet) for state in refs.states) if isinstance(s, dict)]
    if not sheets:
        refs.miss(check.sheet, "no such sheet, initially or after the oracle")
        return
    columns = {c for s in sheets for c in s.get("columns", [])}
    for column in [*check.match, check.column]:
        if column not in columns:
            refs.miss(f"{check.sheet}.{column}", "no such column in the sheet")


def recompute(check: dict[str, Any], ev: Evidence, spec: Any) -> Any:
    sheet = ev.final_state["sheets"].get(check["sheet"])
    return recompute_cell(check, None if sheet is None else sheet_rows(sheet))


def fix_reference(check: dict[str, Any], entry: dict[str, Any], fixing: Fixing) -> str | None:
    """A misspelled column is mapped to the closest column the sheet has, initially or after the oracle."""
    if "no such column" not in str(entry.get("problem", "")):
        return unfixable(entry)
    sheet = check["sheet"]  # the ref is "<sheet>.<column>" and a sheet name may itself contain a dot
    column = str(entry.get("ref")).removeprefix(f"{sheet}.")
    columns = {c for state in fixing.states() for c in state["sheets"].get(sheet, {}).get("columns", [])}
    fixed = closest(column, columns, cutoff=COLUMN_CUTOFF)
    if fixed is None:
        return f"sheet {sheet!r} has no column {column!r}"
    fixing.note(f"check {check['id']}: column {column!r} → {fixed!r}")
    if check["column"] == column:
        check["column"] = fixed
    if column in check["match"]:
        check["match"] = {fixed if k == column else k: v for k, v in check["match"].items()}
    return None


KIND = register_kind(
    CheckKind(
        name="sheet_cell",
        model=SheetCell,
        evaluate=evaluate,
        references=references,
        recompute=recompute,
        fix_reference=fix_reference,
        evidence_for=frozenset({"data_analysis"}),
    )
)
