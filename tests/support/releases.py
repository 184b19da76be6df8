"""Helpers shared by the release tests: verdicts shaped like the battery's, and row comparisons."""

from __future__ import annotations

import pyarrow as pa

from coworkenv.spec.task import TaskSpec
from coworkenv.validate.codes import BATTERY_CODES
from coworkenv.validate.verdict import CheckOutcome, TaskValidation


def passing_validation(spec: TaskSpec, *, valid: bool = True) -> TaskValidation:
    """A verdict shaped like the battery's, without running it (the battery has its own tests)."""
    results = [
        CheckOutcome(
            task_id=spec.id,
            code=code,
            passed=valid or code != "oracle_scores_1",
            severity=sev,
            discriminating=disc,
            details={"score": 1.0} if code == "oracle_scores_1" else {},
            message=desc,
        )  # fmt: skip
        for code, (sev, disc, desc) in BATTERY_CODES.items()
    ]
    return TaskValidation(task_id=spec.id, valid=valid, discrimination=1.0, results=results, evidence_hash="0" * 64)


def sorted_rows(table: pa.Table) -> list[dict]:
    return sorted(table.to_pylist(), key=repr)


N_TASKS = 24
"""Tasks in the release tests' fixture run (tests/data/conftest.py)."""
INVALID_INDEX = 5
"""The one fixture task whose verdict is made invalid."""
