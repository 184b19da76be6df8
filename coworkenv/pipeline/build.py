"""Stage build: every release table from the run's valid and repaired tasks, their verdicts, the repair attempts and
the rollouts, staged as Parquet under `tables/` for the gates.

The tables are written batch by batch (docs/design/pipeline.md, "Bounded memory"): `batch_size` tasks (or rollout rows)
are parsed at a time and become rows of each table they feed, and a table's rows are written out as a row group once
they hold about `data.batches.BATCH_BYTES`; what stays in memory across batches is an index of the valid task ids with
each task's family and tools (shared between tasks offering the same tools), which the `trajectories` and `sft`
tables need.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from coworkenv.data.batches import BATCH_BYTES, UNREADABLE
from coworkenv.data.build import (
    repair_row,
    rl_row,
    rows_table,
    sft_row,
    task_row,
    tools_json,
    trajectories_table_row,
    validation_rows,
)
from coworkenv.data.schemas import REPAIRS, TABLES
from coworkenv.errors import CoworkEnvError
from coworkenv.fileio import staged
from coworkenv.pipeline.rundir import GATES_PASSED, RunDir, batched, iter_rows, valid_tasks, verdicts
from coworkenv.pipeline.summary import counts

log = logging.getLogger(__name__)

WriteTable = Callable[[str, pa.Table], None]

BUILD_BATCH = 100
"""Tasks (or rollout rows) parsed at a time. A parsed task with its verdict holds some 100 KB of Python objects, and
a batch's are all alive while its rows are made: 1,000 at a time took 460 MB, 100 at a time 250 MB, and less time."""


def build_tables(run: RunDir, batch_size: int = BUILD_BATCH) -> dict[str, int]:
    try:
        with staging(run) as write:
            index = _write_tasks(run, write, batch_size)
            _write_repairs(run, write, batch_size)
            _write_rollouts(run, write, index, batch_size)
    except (
        pa.ArrowException,
        KeyError,
        TypeError,
        ValueError,
    ) as exc:  # the run's rows edited: fields missing or of other types
        reason = f"no field {exc}" if isinstance(exc, KeyError) else str(exc).splitlines()[0][:300]
        raise CoworkEnvError(
            f"run {run.run_id!r}: its rollouts or repair attempts do not fit the release tables: {reason}"
        ) from None
    return _staged_rows(run)


def _write_tasks(run: RunDir, write: WriteTable, batch_size: int) -> dict[str, tuple[str, str]]:
    """`tasks`, `rl` (valid tasks) and `validations` (every verdict: rejected and unparsable tasks too), in one read of
    the run's verdicts; the index of the valid tasks: id → (family, tools JSON)."""
    index: dict[str, tuple[str, str]] = {}
    tools: dict[str, str] = {}  # one string per distinct tool set, however many tasks offer it
    for batch in batched(verdicts(run), batch_size):
        write("validations", rows_table("validations", [row for _, v in batch for row in validation_rows(v)]))
        valid = list(valid_tasks(batch))
        for spec, v in valid:
            if spec.id in index:
                raise CoworkEnvError(f"task id {spec.id!r} appears twice")
            if spec.id != v.task_id:
                raise CoworkEnvError(
                    f"task {spec.id!r} has no validation: run the battery before building the tasks table"
                )
            text = tools_json(spec)
            index[spec.id] = (spec.family, tools.setdefault(text, text))
        write("tasks", rows_table("tasks", [task_row(spec, v) for spec, v in valid]))
        write("rl", rows_table("rl", [rl_row(spec) for spec, _ in valid]))
    return index


def _write_repairs(run: RunDir, write: WriteTable, batch_size: int) -> None:
    columns = set(REPAIRS.names)
    attempts = iter_rows(run.file("repaired", "attempts.jsonl"))
    for batch in batched(attempts, batch_size):
        write(
            "repairs",
            rows_table("repairs", [repair_row({k: v for k, v in row.items() if k in columns}) for row in batch]),
        )


def _write_rollouts(run: RunDir, write: WriteTable, index: Mapping[str, tuple[str, str]], batch_size: int) -> None:
    """`trajectories`: the rollouts of valid tasks; `sft`: the passing ones as conversations."""
    for batch in batched(iter_rows(run.file("rollouts", "trajectories.jsonl")), batch_size):
        rows = [r for r in batch if r["task_id"] in index]
        write("trajectories", rows_table("trajectories", [trajectories_table_row(r) for r in rows]))
        write("sft", rows_table("sft", [sft_row(r, *index[r["task_id"]]) for r in rows if r["passed"]]))


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
    return _staged_rows(run, list(tables))


def _staged_rows(run: RunDir, names: Iterable[str] = TABLES) -> dict[str, int]:
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
