"""The check models are the JSON contract: parameters that cannot make sense are rejected when the spec is parsed,
not when it is graded."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from tests.support.builders import check


@pytest.mark.parametrize(
    "fields",
    [
        {"kind": "file_contains", "path": "a"},  # neither text nor regex
        {"kind": "file_contains", "path": "a", "text": "x", "regex": "x"},
        {"kind": "csv_cell", "path": "a", "match": {}, "column": "c"},  # neither equals nor value
        {"kind": "sheet_cell", "sheet": "s", "match": {}, "column": "c", "equals": 1, "value": 1.0},
        {"kind": "event_absent", "event_id": "e1", "title_contains": "x"},
        {"kind": "record", "service": "tickets", "collection": "people", "match": {"id": "t1"}},
        {"kind": "record", "service": "files", "collection": "files", "match": {"id": "t1"}},
        {"kind": "unchanged"},
        {"kind": "unchanged", "service": "calendar", "path": "a"},
        {"kind": "unchanged", "service": "nope"},
        {"kind": "answer_contains"},
        {"kind": "mail_in_folder", "ids": [], "folder": "x"},
        {"kind": "answer_number", "value": 1, "tol": -1},
        {"kind": "file_exists", "path": "a", "weight": 0},
        {"kind": "file_exists", "path": "a", "unknown": 1},
        {"kind": "no_such_kind"},
        # Regression (fixed): an invalid regex is accepted by the spec and only fails at grading time (re.error escapes
        # `evaluate`); the spec should reject it up front.
        {"kind": "file_contains", "path": "a", "regex": "("},
    ],
)
def test_invalid_check_parameters(fields):
    with pytest.raises(ValidationError):
        check(**fields)
