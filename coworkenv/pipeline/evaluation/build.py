"""Stage build: the `eval_results`, `trajectories` and `capability_profile` tables of the run's trials (staged for the
gate), its report and its capability profile."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from coworkenv.errors import CoworkEnvError
from coworkenv.pipeline.evaluation.run_files import EVAL_DIR, REPORT_DIR, read_config, suite_info, suite_tasks
from coworkenv.pipeline.rundir import RunDir

log = logging.getLogger(__name__)


def build(run: RunDir, out: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """The run's tables (staged for the gate), its report and profile (under `out`, default the run's `report/`)."""
    from coworkenv.data.build import eval_results_table, trajectories_table
    from coworkenv.data.schemas import TABLES, conform_table
    from coworkenv.eval.metrics import summarize
    from coworkenv.eval.profile import capability_profile, profile_table
    from coworkenv.eval.report import write_report
    from coworkenv.pipeline.release_tables import stage_tables
    from coworkenv.rollout import eval_rows, read_trials, trajectory_rows

    config = read_config(run)
    specs = {t.id: t for t in suite_tasks(run)}
    suite = suite_info(run)
    wanted = {(task_id, trial) for task_id in specs for trial in range(config.trials)}
    # A run resumed with fewer trials or tasks leaves the others' records in the file: they are not this evaluation's.
    records = [r for r in read_trials(run.file(EVAL_DIR, "trials.jsonl")) if r.key in wanted]
    expected = len(wanted)
    if len(records) != expected:
        raise CoworkEnvError(
            f"run {run.run_id!r}: {len(records)} of {expected} trials recorded: run the trials stage again"
        )
    records.sort(key=lambda r: (r.task_id, r.trial))  # finishing order varies with the workers; the tables must not
    label = records[0].agent
    rows = eval_rows(records, specs, eval_id=run.run_id, suite=suite["name"])
    tables = {name: conform_table(name, None) for name in TABLES}
    tables["eval_results"] = eval_results_table(rows)
    tables["trajectories"] = trajectories_table(trajectory_rows(records, specs))
    tables["capability_profile"] = profile_table(rows, model=label)
    stage_tables(run, tables)
    report_dir = Path(out) if out is not None else run.file(REPORT_DIR)
    summary = summarize(rows, seed=config.seed)
    write_report(
        report_dir, summary, rows, title=f"{label} on {suite['name']}", profile=capability_profile(rows, model=label)
    )
    report = (report_dir / "report.html").absolute()
    log.info(
        "build: %d eval_results rows, pass rate %.3f; report: %s", len(rows), summary.overall.pass_rate.value, report
    )
    return {
        "eval_results": len(rows),
        "report": str(report_dir / "report.html"),
        "pass_rate": summary.overall.pass_rate.value,
    }
