"""Run coworkenv_core_check for real: `dag.test()` in process, and `airflow dags test` through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytestmark = [pytest.mark.airflow, pytest.mark.xdist_group("airflow")]


def _run(dag, conf: dict) -> tuple[str, dict[tuple[str, int], str | None], dict | None]:
    """dag.test() with `conf`; returns the run state, task states by (task_id, map_index), the summary XCom."""
    from airflow.models.taskinstance import TaskInstance
    from airflow.models.xcom import XComModel
    from airflow.utils.session import create_session
    from sqlalchemy import select

    dagrun = dag.test(run_conf=conf)
    with create_session() as session:
        tis = session.scalars(
            select(TaskInstance).where(TaskInstance.dag_id == dag.dag_id, TaskInstance.run_id == dagrun.run_id)
        ).all()
        states = {(ti.task_id, ti.map_index): ti.state for ti in tis}
        row = session.scalars(
            XComModel.get_many(run_id=dagrun.run_id, dag_ids=dag.dag_id, task_ids="summarize", key="return_value")
        ).first()
        summary = XComModel.deserialize_value(row) if row is not None else None
    return str(dagrun.state), states, summary


@pytest.mark.slow
def test_dag_test_passes_on_a_valid_task(core_check_dag, task_file: Path):
    state, states, summary = _run(core_check_dag, {"tasks_path": str(task_file)})
    assert state == "success", states
    assert states == {("load_tasks", -1): "success", ("check_shard", 0): "success", ("summarize", -1): "success"}
    assert summary == {
        "tasks": 1,
        "gate_passed": 1,
        "gate_failed": 0,
        "oracle_perfect": 1,
        "null_zero": 1,
        "families": {"mail_triage": {"tasks": 1, "gate_passed": 1}},
        "failed": [],
    }


@pytest.mark.slow
def test_dag_test_shards_and_reports_gate_failures(core_check_dag, task_jsonl: Path):
    """Three tasks, one per shard; the incomplete oracle fails the gate but fail_on_gate is off."""
    conf = {"tasks_path": str(task_jsonl), "shard_size": 1, "fail_on_gate": False}
    state, states, summary = _run(core_check_dag, conf)
    assert state == "success", states
    assert sorted(k for k in states if k[0] == "check_shard") == [("check_shard", i) for i in range(3)]
    assert summary["tasks"] == 3
    assert summary["gate_passed"] == 2
    assert summary["oracle_perfect"] == 2
    assert [f["task_id"] for f in summary["failed"]] == ["mail_triage-00042-broken"]
    assert summary["failed"][0]["failures"]


@pytest.mark.slow
def test_dag_test_fails_the_run_on_gate_failure(core_check_dag, task_jsonl: Path):
    state, states, summary = _run(core_check_dag, {"tasks_path": str(task_jsonl), "fail_on_gate": True})
    assert state == "failed"
    assert states[("check_shard", 0)] == "success"
    assert states[("summarize", -1)] == "failed"  # AirflowFailException: no retry
    assert summary is None


@pytest.mark.slow
def test_dag_test_fails_fast_on_a_missing_path(core_check_dag, tmp_path: Path):
    state, states, _ = _run(core_check_dag, {"tasks_path": str(tmp_path / "nowhere")})
    assert state == "failed"
    assert states[("load_tasks", -1)] == "failed"


@pytest.mark.slow
def test_airflow_dags_test_cli(airflow_home, task_file: Path, tmp_path: Path):
    """What `make demo` runs, through the real CLI against the session's Airflow home."""
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    spec = json.loads(task_file.read_text())
    for n in range(2):
        (tasks / f"{n}.json").write_text(json.dumps({**spec, "id": f"{spec['id']}-{n}"}))
    conf = json.dumps({"tasks_path": str(tasks), "shard_size": 1})
    result = airflow_home.cli("dags", "test", "coworkenv_core_check", "--conf", conf)
    assert result.returncode == 0, result.stdout[-6000:]
    assert "2/2 tasks pass the grading-consistency gate" in result.stdout
    assert "state=success" in result.stdout
