"""What an evaluation run holds (the layout in `pipeline.evaluation`) and how its stages and readers find it: the
recorded config, the prepared suite, the checkpoint's identity, the report's summary, and an evaluation's rows."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from coworkenv.data.root import DataRoot
from coworkenv.errors import CoworkEnvError
from coworkenv.fileio import read_json
from coworkenv.pipeline.config import EvaluationConfig
from coworkenv.pipeline.rundir import RunDir, read_job_config, read_jsonl, write_json
from coworkenv.spec.task import TaskSpec

EVAL_DIR = "eval"
REPORT_DIR = "report"


def write_config(run: RunDir, config: EvaluationConfig) -> None:
    write_json(run.file(EVAL_DIR, "config.json"), config.model_dump(mode="json"))


def read_config(run: RunDir) -> EvaluationConfig:
    missing = f"run {run.run_id!r} is not an evaluation run under {run.data_root.url} (no {EVAL_DIR}/config.json)"
    return read_job_config(run.file(EVAL_DIR, "config.json"), EvaluationConfig, missing)


def suite_tasks(run: RunDir) -> list[TaskSpec]:
    """The tasks the prepare stage chose (they were checked when the suite was loaded)."""
    lines = read_jsonl(run.file(EVAL_DIR, "suite.jsonl"))
    if not lines:
        raise CoworkEnvError(f"run {run.run_id!r} has no suite: prepare it first")
    return [TaskSpec.model_validate_json(line) for line in lines]


def suite_info(run: RunDir) -> dict[str, Any]:
    path = run.file(EVAL_DIR, "suite.json")
    if not path.exists():
        read_config(run)  # a run id that names no evaluation is told so
        raise CoworkEnvError(f"run {run.run_id!r} has no suite: prepare it first")
    info = read_json(path)
    if not isinstance(info, dict):
        raise CoworkEnvError(f"run {run.run_id!r}: {EVAL_DIR}/suite.json is not a JSON object: prepare it again")
    return info


def model_identity(run: RunDir) -> dict[str, Any]:
    path = run.file(EVAL_DIR, "model.json")
    return read_json(path) if path.exists() else {}


def summary_of(run: RunDir, out: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """The run's `summary.json` (written by the build stage)."""
    path = (Path(out) if out is not None else run.file(REPORT_DIR)) / "summary.json"
    data = read_json(path)
    if not isinstance(data, dict):
        raise CoworkEnvError(f"{path}: expected a JSON object")
    return data


def eval_rows(ref: str, data_root: str | os.PathLike[str] | DataRoot | None = None) -> list[dict[str, Any]]:
    """One evaluation's `eval_results` rows: from its release (kind `eval`) or, before it is published, its run's
    staged table."""
    import pyarrow.parquet as pq

    from coworkenv.data.reader import complete_manifest, read_table
    from coworkenv.data.root import open_root
    from coworkenv.data.schemas import EVAL_RESULTS

    root = open_root(data_root)
    if complete_manifest(root, ref) is not None:
        rows = read_table(root, ref, "eval_results").to_pylist()
    else:
        run = RunDir.open(ref, root)
        staged = run.file("tables", "eval_results.parquet")
        if not staged.exists():
            raise CoworkEnvError(f"{ref!r} is neither an evaluation release nor an evaluation run under {root.url}")
        rows = pq.read_table(staged, schema=EVAL_RESULTS).to_pylist()
    if not rows:
        raise CoworkEnvError(f"{ref!r} holds no eval_results rows: is it an evaluation?")
    return rows
