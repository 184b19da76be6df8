"""Stage build: every release table from the run's valid and repaired tasks, their verdicts, the repair attempts and
the rollouts, staged as Parquet under `tables/` for the gates."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq

from coworkenv.data.build import release_tables, validations_table
from coworkenv.data.schemas import REPAIRS, TABLES
from coworkenv.pipeline.rundir import GATES_PASSED, RunDir, read_jsonl, valid_tasks, verdicts


def build_tables(run: RunDir) -> dict[str, int]:
    tasks = verdicts(run)  # read once: the valid specs and every verdict come from it
    specs = valid_tasks(tasks)
    columns = set(REPAIRS.names)
    attempts = [{k: v for k, v in json.loads(line).items() if k in columns} for line in read_jsonl(run.file("repaired", "attempts.jsonl"))]
    trajectories = [json.loads(line) for line in read_jsonl(run.file("rollouts", "trajectories.jsonl"))]
    tables = release_tables([s for s, _ in specs], {v.task_id: v for _, v in specs}, repairs=attempts, trajectories=trajectories)
    tables["validations"] = validations_table(v for _, v in tasks)  # every verdict: rejected and unparsable tasks too
    out = run.file("tables")
    out.mkdir(parents=True, exist_ok=True)
    run.file(*GATES_PASSED).unlink(missing_ok=True)  # new tables need the gates again
    for name, table in tables.items():
        pq.write_table(table, out / f"{name}.parquet")
    return {name: table.num_rows for name, table in tables.items()}


def staged_tables(run: RunDir) -> dict[str, pa.Table]:
    out = run.file("tables")
    return {name: pq.read_table(out / f"{name}.parquet", schema=schema) for name, schema in TABLES.items()}
