"""A run's release tables, as every job stages them under `tables/`: written whole or not at all (`staging`,
`stage_tables`), checked against their schemas (`staged_table_files`), gated (`gate_tables`: what passed is recorded
with the tables' digests) and handed to publication only if unchanged since (`require_passed`). The build, gate and
publish stages of the synthesis and evaluation jobs are made of these."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from coworkenv.data.batches import BATCH_BYTES, UNREADABLE
from coworkenv.data.layout import Manifest
from coworkenv.data.schemas import TABLES
from coworkenv.errors import CoworkEnvError
from coworkenv.fileio import read_json, staged
from coworkenv.pipeline.rundir import BATCH, GATES_PASSED, RunDir, write_json
from coworkenv.pipeline.summary import counts

log = logging.getLogger(__name__)

WriteTable = Callable[[str, pa.Table], None]


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


def gate_tables(run: RunDir, stages: tuple[str, ...], batch_size: int = BATCH) -> dict[str, Any]:
    """The Great Expectations gates of `stages` over the staged tables, read `batch_size` rows at a time
    (`run_gate_files`). A failure raises `GateFailed` (Data Docs under the run's `quality/`); a pass is recorded with
    the digests of the tables it checked."""
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


@contextmanager
def staging(run: RunDir) -> Iterator[WriteTable]:
    """`write(name, table)` appends the rows of `table` to the staged table `name`, a row group once its held rows reach
    about `BATCH_BYTES` (small batches need not make small row groups); every table of the release is staged under
    `tables/` when the block ends (those never written: empty), whole or not at all."""
    with staged(run.file("tables"), folder=True) as out:
        writers: dict[str, pq.ParquetWriter] = {}
        held: dict[str, list[pa.Table]] = {}
        held_bytes: dict[str, int] = {}

        def flush(name: str) -> None:
            parts = held.pop(name, [])
            held_bytes.pop(name, None)
            if parts:
                writers[name].write_table(pa.concat_tables(parts) if len(parts) > 1 else parts[0])

        def write(name: str, table: pa.Table) -> None:
            if name not in writers:
                writers[name] = pq.ParquetWriter(out / f"{name}.parquet", TABLES[name])
            if table.num_rows:
                held.setdefault(name, []).append(table)
                held_bytes[name] = held_bytes.get(name, 0) + table.nbytes
                if held_bytes[name] >= BATCH_BYTES:
                    flush(name)

        try:
            yield write
            for name in TABLES:
                write(name, TABLES[name].empty_table())
                flush(name)
        finally:
            for writer in writers.values():
                writer.close()
        run.file(*GATES_PASSED).unlink(missing_ok=True)  # new tables need the gates again


def stage_tables(run: RunDir, tables: Mapping[str, pa.Table | Iterable[pa.Table]]) -> dict[str, int]:
    """Write the run's release tables (each whole, or as a stream of parts) under `tables/` (whole or not at all) for
    the gates; the row counts."""
    with staging(run) as write:
        for name, parts in tables.items():
            for part in [parts] if isinstance(parts, pa.Table) else parts:
                write(name, part)
    return staged_rows(run, list(tables))


def staged_rows(run: RunDir, names: Iterable[str] = TABLES) -> dict[str, int]:
    rows = {name: pq.ParquetFile(staged_path(run, name)).metadata.num_rows for name in names}
    log.info("build: tables staged for the gates under %s, rows: %s", run.file("tables"), counts(rows))
    return rows


def staged_path(run: RunDir, name: str) -> Path:
    return run.file("tables", f"{name}.parquet")


def staged_table_files(run: RunDir) -> dict[str, Path]:
    """The staged tables' files, each checked to hold its table's schema (not read: the stages after build stream them)."""
    if not run.file("tables").is_dir():  # build stages the folder whole: without it, the run was never built
        raise CoworkEnvError(f"run {run.run_id!r} has no staged tables under {run.path}: build it first")
    files = {}
    for name, schema in TABLES.items():
        path = staged_path(run, name)
        try:
            found = pq.read_schema(path)
        except UNREADABLE as exc:  # missing, a folder, damaged
            reason = str(exc).splitlines()[0][:200]
            raise CoworkEnvError(f"{path}: not a staged table of this run ({reason}): build it again") from None
        if not found.equals(schema, check_metadata=False):
            raise CoworkEnvError(f"{path}: not a staged table of this run (another schema): build it again")
        files[name] = path
    return files


def staged_tables(run: RunDir) -> dict[str, pa.Table]:
    """The staged tables, read whole (small runs and tests; the stages stream `staged_table_files`)."""
    tables = {}
    for name, path in staged_table_files(run).items():
        try:
            tables[name] = pq.read_table(path, schema=TABLES[name])
        except UNREADABLE as exc:  # damaged
            reason = str(exc).splitlines()[0][:200]
            raise CoworkEnvError(f"{path}: not a staged table of this run ({reason}): build it again") from None
    return tables


def published(manifest: Manifest, run: RunDir) -> str:
    """`published release <id> (parent …) at <where>; rows: tasks 40, …`: what the publish task's log says."""
    kind = "evaluation release" if manifest.kind == "eval" else "release"
    where = run.data_root.url_of(run.data_root.join("releases", manifest.release_id))
    return f"published {kind} {manifest.release_id} (parent {manifest.parent or 'none'}) at {where}; rows: {counts(manifest.row_counts)}"
