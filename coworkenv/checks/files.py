"""Checks that name a file (`file_*`, `csv_cell`, `unchanged` by path): the reference they make, and how a check
that holds on an untouched file is made strict."""

from __future__ import annotations

from typing import Any

from coworkenv.checks.base import Evidence, References
from coworkenv.checks.text import added_lines
from coworkenv.workspace.paths import is_normal_path


def path_references(path: str, refs: References, *, must_exist: bool = True) -> None:
    """The path must be well-formed and, unless the check is about a file's absence ("never create X" is legitimate),
    exist initially, after the oracle, or be named by a solution step."""
    if not is_normal_path(path):
        refs.miss(path, "path is not relative and normalized")
    elif must_exist and not refs.in_any_state(lambda s: path in s.get("files", {})) and path not in refs.named_paths:
        refs.miss(path, "file exists nowhere: not initially, not after the oracle, not in any solution step")


def strengthen_to_content(check: dict[str, Any], oracle: Evidence) -> dict[str, Any] | None:
    """A `file_contains` on the first line the oracle added to the file: only writing it satisfies that."""
    final = oracle.final_state["files"]
    if check["path"] not in final or check.get("absent"):  # "must not contain" has no stricter positive form
        return None
    added = added_lines(oracle.initial_state["files"].get(check["path"]), final[check["path"]])
    if not added:
        return None
    candidate = {k: v for k, v in check.items() if k not in ("regex", "text", "case_sensitive")}
    return {**candidate, "kind": "file_contains", "text": added[0][:200]}
