"""Stage build: every release table from the run's valid and repaired tasks, their verdicts, the repair attempts and
the rollouts, staged as Parquet under `tables/` for the gates.

The tables are written batch by batch (docs/design/pipeline.md, "Bounded memory"): `batch_size` tasks (or rollout rows)
are parsed at a time and become rows of each table they feed, and a table's rows are written out as a row group once
they hold about `data.batches.BATCH_BYTES`; what stays in memory across batches is an index of the valid task ids with
each task's family and tools (shared between tasks offering the same tools), which the `trajectories` and `sft`
tables need.
"""

from __future__ import annotations

from collections.abc import Mapping

import pyarrow as pa

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
from coworkenv.data.schemas import REPAIRS
from coworkenv.errors import CoworkEnvError
from coworkenv.pipeline.release_tables import WriteTable, staged_rows, staging
from coworkenv.pipeline.rundir import RunDir, batched, iter_rows, valid_tasks, verdicts

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
    return staged_rows(run)


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
