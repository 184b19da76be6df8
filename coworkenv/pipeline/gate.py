"""Stage gate: the Great Expectations gates at the validation and rollout boundaries over the staged tables. A failure
raises `GateFailed` (Data Docs under the run's `quality/`); a pass is recorded with the digests of the tables it
checked, and the publish stage publishes only tables that passed."""

from __future__ import annotations

import hashlib
import logging
from typing import Any

from coworkenv.data.schemas import TABLES
from coworkenv.errors import CoworkEnvError
from coworkenv.fileio import read_json
from coworkenv.pipeline.build import staged_table_files
from coworkenv.pipeline.rundir import BATCH, GATES_PASSED, RunDir, write_json

log = logging.getLogger(__name__)

STAGES = ("validated", "rollouts")


def staged_digests(run: RunDir) -> dict[str, str]:
    """sha256 of each staged table file: what the gates passed is what gets published."""
    digests = {}
    for name in TABLES:
        path = run.file("tables", f"{name}.parquet")
        try:
            with path.open("rb") as f:
                digests[name] = hashlib.file_digest(f, "sha256").hexdigest()
        except OSError as exc:
            raise CoworkEnvError(
                f"{path}: cannot read ({exc.strerror or type(exc).__name__}): build the run again"
            ) from None
    return digests


def gate_tables(run: RunDir, stages: tuple[str, ...] = STAGES, batch_size: int = BATCH) -> dict[str, Any]:
    """The gates of `stages` (a synthesis run's by default; an evaluation run's is `evaluated`), over the staged
    tables read `batch_size` rows at a time (`run_gate_files`)."""
    from coworkenv.quality.gates import GateFailed, run_gate_files  # Great Expectations takes seconds to import

    run.file(*GATES_PASSED).unlink(missing_ok=True)
    files = staged_table_files(run)
    statistics = {}
    for stage in stages:
        try:
            result = run_gate_files(stage, files, report_dir=run.file("quality"), batch_size=batch_size)
        except GateFailed as failed:  # said here in full, before the traceback that stops the task
            log.error("%s", failed.result.summary())
            raise
        log.info("%s", result.summary())
        statistics[stage] = result.statistics
    write_json(run.file(*GATES_PASSED), {"stages": list(stages), "tables": staged_digests(run)})
    return statistics


def require_passed(run: RunDir) -> None:
    """Refuse tables that were not gated, or were rebuilt after the gates passed."""
    passed = run.file(*GATES_PASSED)
    record = read_json(passed) if passed.exists() else None
    if not isinstance(record, dict) or record.get("tables") != staged_digests(run):
        raise CoworkEnvError(
            f"run {run.run_id!r}: the staged tables have not passed the gates (coworkenv gate --run-id {run.run_id})"
        )
