"""
### CoworkEnv core check

Proves a set of task files end to end, the same way `coworkenv gate` does on the command line:
for every task, the **grading-consistency gate** (oracle scores 1.0, an empty trajectory 0.0, a prohibited
call zeroes the score), then an oracle and a null episode graded by replay.

1. **load_tasks** reads `tasks_path` (a `.json` file, a `.jsonl` file or a folder of both), validates every
   TaskSpec and splits the task references into shards of `shard_size`.
2. **check_shard** is mapped over the shards; each shard runs `coworkenv.pipeline.core_check.check_tasks`
   and returns one report per task.
3. **summarize** counts the reports (overall and per family) and, when `fail_on_gate` is set, fails the run
   if any task fails the gate.

Only task references and report dicts travel through XCom. A relative `tasks_path` is resolved against
`COWORKENV_ROOT` (else the checkout this file lives in) on the worker that runs the task.
"""

from __future__ import annotations

from datetime import timedelta

from airflow.sdk import dag, task

from coworkenv.pipeline.airflow import params_from
from coworkenv.pipeline.core_check import CoreCheckConfig


@dag(
    dag_id="coworkenv_core_check",
    doc_md=__doc__,
    description="The grading-consistency gate and an oracle and a null episode for every task of a task file or folder.",
    schedule=None,
    catchup=False,
    max_active_runs=4,
    tags=["coworkenv", "core", "gate"],
    default_args={"owner": "coworkenv", "retries": 1, "retry_delay": timedelta(seconds=30)},
    params=params_from(CoreCheckConfig),
)
def coworkenv_core_check():
    @task
    def load_tasks(params=None) -> list[list[dict[str, str]]]:
        """Validate every task file and return shards of {path, task_id} references."""
        from airflow.sdk.exceptions import AirflowFailException

        from coworkenv.errors import CoworkEnvError
        from coworkenv.pipeline.config import validated_config
        from coworkenv.pipeline.core_check import shard_task_refs

        try:  # bad input: retrying cannot help
            config = validated_config(CoreCheckConfig, dict(params), "settings")
            shards = shard_task_refs(config.tasks(), config.shard_size)
        except CoworkEnvError as exc:
            raise AirflowFailException(str(exc)) from None
        print(f"{sum(map(len, shards))} tasks under {params['tasks_path']}, {len(shards)} shard(s)")
        return shards

    @task(map_index_template="{{ shard_label }}")
    def check_shard(shard: list[dict[str, str]]) -> list[dict]:
        """Run the core check on one shard; return one JSON report per task."""
        from airflow.sdk import get_current_context

        from coworkenv.pipeline.core_check import check_tasks, load_task_refs

        get_current_context()["shard_label"] = f"{shard[0]['task_id']} (+{len(shard) - 1})"
        specs = load_task_refs(shard)
        reports = [report.model_dump(mode="json") for report in check_tasks(specs)]
        for report in reports:
            status = "ok" if report["gate_passed"] else "FAIL " + "; ".join(report["failures"])
            print(f"{report['task_id']}: oracle={report['oracle_score']} null={report['null_score']} {status}")
        return reports

    @task
    def summarize(shard_reports, params=None) -> dict:
        """Count the reports; fail the run if a task fails the gate and fail_on_gate is set."""
        from airflow.sdk.exceptions import AirflowFailException

        from coworkenv.pipeline.core_check import summarize_reports

        # One slice request for all shards (iterating a mapped XCom ends on a logged 404).
        reports = [report for shard in shard_reports[:] for report in shard]
        summary = summarize_reports(reports)
        print(f"{summary['gate_passed']}/{summary['tasks']} tasks pass the grading-consistency gate")
        for r in summary["failed"]:
            print(f"{r['task_id']}: {'; '.join(r['failures'])}")
        if summary["failed"] and params["fail_on_gate"]:
            raise AirflowFailException(
                f"{summary['gate_failed']} of {summary['tasks']} tasks fail the grading-consistency gate"
            )
        return summary

    summarize(check_shard.expand(shard=load_tasks()))


coworkenv_core_check()
