"""Helpers shared by the release tests: verdicts shaped like the battery's, and row comparisons."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from coworkenv.data.layout import FileEntry, content_hash_of
from coworkenv.spec.task import TaskSpec
from coworkenv.spec.verdict import CheckOutcome, TaskValidation
from coworkenv.validate.codes import BATTERY_CODES


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
        )
        for code, (sev, disc, desc) in BATTERY_CODES.items()
    ]
    return TaskValidation(task_id=spec.id, valid=valid, discrimination=1.0, results=results, evidence_hash="0" * 64)


def sorted_rows(table: pa.Table) -> list[dict]:
    return sorted(table.to_pylist(), key=repr)


N_TASKS = 24
"""Tasks in the release tests' fixture run (tests/data/conftest.py)."""
INVALID_INDEX = 5
"""The one fixture task whose verdict is made invalid."""


def edit_manifest(release_dir: Path, edit: Callable[[dict], None]) -> None:
    """Change a published release's `manifest.json` in place (`edit` gets its JSON as a dict)."""
    path = release_dir / "manifest.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    edit(data)
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def add_listed_part(release_dir: Path, table: str, relative: str, rows: pa.Table) -> None:
    """Write `rows` as one more Parquet part of `table` and list it in the manifest, as if published with it."""
    path = release_dir / table / relative
    pq.write_table(rows, path)
    data = path.read_bytes()
    entry = {
        "path": f"{table}/{relative}",
        "rows": rows.num_rows,
        "bytes": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
    }

    def edit(manifest: dict) -> None:
        manifest["files"][table].append(entry)
        manifest["row_counts"][table] += rows.num_rows
        manifest["content_hashes"][table] = content_hash_of([FileEntry(**e) for e in manifest["files"][table]])

    edit_manifest(release_dir, edit)
