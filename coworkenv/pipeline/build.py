"""Stage build: every release table from the run's valid and repaired tasks, their verdicts, the repair attempts and
the rollouts, staged as Parquet under `tables/` for the gates."""

from __future__ import annotations

import logging

import pyarrow as pa
import pyarrow.parquet as pq

from coworkenv.data.build import release_tables, validations_table
from coworkenv.data.schemas import REPAIRS, TABLES
from coworkenv.errors import CoworkEnvError
from coworkenv.files import staged
from coworkenv.pipeline.rundir import GATES_PASSED, RunDir, read_rows, valid_tasks, verdicts
from coworkenv.pipeline.summary import counts

log = logging.getLogger(__name__)


def build_tables(run: RunDir) -> dict[str, int]:
    tasks = verdicts(run)  # read once: the valid specs and every verdict come from it
    specs = valid_tasks(tasks)
    columns = set(REPAIRS.names)
    attempts = [{k: v for k, v in row.items() if k in columns} for row in read_rows(run.file("repaired", "attempts.jsonl"))]
    trajectories = read_rows(run.file("rollouts", "trajectories.jsonl"))
    try:
        tables = release_tables([s for s, _ in specs], {v.task_id: v for _, v in specs}, repairs=attempts, trajectories=trajectories)
        tables["validations"] = validations_table(v for _, v in tasks)  # every verdict: rejected and unparsable tasks too
    except (pa.ArrowException, KeyError, TypeError, ValueError) as exc:  # the run's rows edited: fields missing or of other types
        reason = f"no field {exc}" if isinstance(exc, KeyError) else str(exc).splitlines()[0][:300]
        raise CoworkEnvError(f"run {run.run_id!r}: its rollouts or repair attempts do not fit the release tables: {reason}") from None
    return stage_tables(run, tables)


def stage_tables(run: RunDir, tables: dict[str, pa.Table]) -> dict[str, int]:
    """Write the run's release tables under `tables/` (whole or not at all) for the gates; the row counts."""
    with staged(run.file("tables"), folder=True) as out:
        for name, table in tables.items():
            pq.write_table(table, out / f"{name}.parquet")
        run.file(*GATES_PASSED).unlink(missing_ok=True)  # new tables need the gates again
    rows = {name: table.num_rows for name, table in tables.items()}
    log.info("build: tables staged for the gates under %s, rows: %s", run.file("tables"), counts(rows))
    return rows


def staged_tables(run: RunDir) -> dict[str, pa.Table]:
    out = run.file("tables")
    tables = {}
    for name, schema in TABLES.items():
        try:
            tables[name] = pq.read_table(out / f"{name}.parquet", schema=schema)
        except (OSError, pa.ArrowException) as exc:  # missing, a folder, damaged, or another schema
            reason = str(exc).splitlines()[0][:200]
            raise CoworkEnvError(f"{out / f'{name}.parquet'}: not a staged table of this run ({reason}): build it again") from None
    return tables
