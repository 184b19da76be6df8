"""coworkenv_evaluate: the trigger form (generated from EvaluationConfig), the task graph and its assets, and real runs
with `dag.test()`: the oracle on a small benchmark publishes an eval release with its report and profile; a
contaminated suite fails in prepare and publishes nothing."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from tests.dags.conftest import AirflowHome, asset_events

pytestmark = [pytest.mark.airflow, pytest.mark.xdist_group("airflow")]


def test_form_is_generated_from_the_config_and_graph(evaluate_dag):
    from coworkenv.pipeline.config import EvaluationConfig, form_order
    from coworkenv.sandbox.choices import RUNTIME_CHOICES

    dag = evaluate_dag
    assert dag.catchup is False and dag.schedule is None and "evaluation" in dag.tags and dag.doc_md
    params = dag.params.dump()
    assert list(params) == form_order(EvaluationConfig)  # every field, in order: one source for form, CLI and YAML
    for name, field in EvaluationConfig.model_fields.items():
        param = dag.params.get_param(name)
        assert param.description == field.description and param.schema["title"] == field.title, name
        assert params[name] == field.default, name
    assert params["agent"] == "oracle" and params["suite"] == "bench" and params["trials"] == 3
    assert dag.params.get_param("runtime").schema["enum"] == list(RUNTIME_CHOICES)
    assert dag.params.get_param("user").schema["enum"] == ["scripted", "llm"]
    assert (
        dag.params.get_param("trials").schema["exclusiveMinimum"] == 0
        and dag.params.get_param("trials").schema["exclusiveMaximum"] == 33
    )
    assert dag.params.get_param("train_releases").schema["type"] == ["array", "null"]
    assert dag.params.get_param("max_new_tokens").schema["type"] == ["integer", "null"]
    graph = {t.task_id: sorted(t.downstream_task_ids) for t in dag.tasks}
    assert graph == {"prepare": ["trials"], "trials": ["build"], "build": ["gate"], "gate": ["publish"], "publish": []}
    assert [o.name for o in dag.get_task("publish").outlets] == [
        "coworkenv-eval-report",
        "coworkenv-capability-profile",
    ]
    assert all(not dag.get_task(t).outlets for t in ("prepare", "trials", "build", "gate"))
    assert dag.get_task("gate").retries == 0 and dag.default_args["retries"] == 1


@pytest.mark.slow
def test_dag_test_evaluates_the_oracle_and_publishes_an_eval_release(
    evaluate_dag, airflow_home: AirflowHome, caplog: pytest.LogCaptureFixture
):
    from coworkenv.data.reader import latest_release, list_releases, read_table
    from coworkenv.eval.suite import build_bench
    from coworkenv.pipeline.rundir import RunDir
    from coworkenv.spec.capabilities import CapabilityProfile

    caplog.set_level(logging.INFO, logger="coworkenv.progress")
    root = Path(airflow_home.env["COWORKENV_DATA_ROOT"])
    bench = build_bench(6, seed=3, data_root=root, runtime="none", workers=1)
    latest = latest_release(root)
    run = evaluate_dag.test(
        run_conf={"agent": "oracle", "suite": bench.release_id, "trials": 2, "runtime": "none", "workers": 1}
    )
    assert str(run.state) == "success"
    assert {ti.task_id: str(ti.state) for ti in run.get_task_instances()} == dict.fromkeys(
        ("prepare", "trials", "build", "gate", "publish"), "success"
    )
    # the trials task passes no progress callback: its progress lines go to the task's log
    assert any(
        r.name == "coworkenv.progress" and r.getMessage().startswith("trials: 12/12 (100%), ") for r in caplog.records
    )
    [release] = [m for m in list_releases(root) if m.run_id == run.run_id]
    assert release.kind == "eval" and release.parent == bench.release_id and release.row_counts["eval_results"] == 12
    extra = {"release_id": release.release_id, "row_counts": release.row_counts}
    assert asset_events(run.run_id) == {"coworkenv-eval-report": [extra], "coworkenv-capability-profile": [extra]}
    assert latest_release(root) == latest  # LATEST still names the newest task release (or none)
    rows = read_table(root, release.release_id, "eval_results").to_pylist()
    assert {(r["agent"], r["score"], r["passed"], r["eval_id"]) for r in rows} == {("oracle", 1.0, True, run.run_id)}
    report = RunDir.open(run.run_id, root).file("report")
    summary = json.loads((report / "summary.json").read_text())
    assert summary["overall"]["pass_hat_k"]["value"] == 1.0 and summary["k"] == 2
    assert "data:image/png;base64," in (report / "report.html").read_text(encoding="utf-8")
    profile = CapabilityProfile.model_validate_json((report / "profile.json").read_text())
    table = read_table(root, release.release_id, "capability_profile").to_pylist()
    assert [(r["capability"], r["difficulty"], r["attempts"], r["pass_rate"]) for r in table] == [
        (c.capability, c.difficulty, c.attempts, c.pass_rate) for c in profile.rows
    ]


@pytest.mark.slow
def test_a_contaminated_suite_fails_prepare_and_publishes_nothing(
    evaluate_dag, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    from coworkenv.data.reader import list_releases
    from coworkenv.pipeline.rundir import RunDir
    from tests.support.suites import example_tasks, publish_task_release, write_suite

    root = tmp_path / "data"
    monkeypatch.setenv("COWORKENV_DATA_ROOT", str(root))  # a data root of its own: its LATEST is the training release
    tasks = example_tasks()
    suite = write_suite(tmp_path / "suite.jsonl", tasks)
    training = publish_task_release(root, tasks[2:])
    run = evaluate_dag.test(run_conf={"suite": str(suite), "trials": 1, "runtime": "none"})
    assert str(run.state) == "failed"
    states = {ti.task_id: str(ti.state) for ti in run.get_task_instances()}
    assert states["prepare"] == "failed" and all(
        states[t] == "upstream_failed" for t in ("trials", "build", "gate", "publish")
    ), states
    assert [m.release_id for m in list_releases(root)] == [training.release_id]
    folder = RunDir.open(run.run_id, root)
    contamination = json.loads(folder.file("eval", "contamination.json").read_text())
    assert contamination["contaminated_ids"] == [t.id for t in tasks[2:]]
    assert not folder.file("eval", "trials.jsonl").exists() and not folder.file("tables").exists()


@pytest.mark.slow
def test_an_openai_agent_at_a_connection_without_a_model(evaluate_dag, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """`openai:<model>` with an Airflow connection that names no model: the agent's model is asked for."""
    from coworkenv.data.reader import list_releases, read_table
    from tests.support.instant_endpoint import instant_endpoint
    from tests.support.suites import example_tasks, write_suite

    root = tmp_path / "data"
    monkeypatch.setenv("COWORKENV_DATA_ROOT", str(root))
    suite = write_suite(tmp_path / "suite.jsonl", example_tasks()[:2])
    with instant_endpoint(calls=1) as endpoint:
        monkeypatch.setenv("AIRFLOW_CONN_EVAL_LLM", json.dumps({"conn_type": "http", "host": endpoint.base_url}))
        run = evaluate_dag.test(
            run_conf={"agent": "openai:m1", "llm_conn_id": "eval_llm", "suite": str(suite), "trials": 1}
        )
        assert endpoint.stats()["requests"] == 4
    assert str(run.state) == "success"
    [release] = [m for m in list_releases(root) if m.kind == "eval"]
    rows = read_table(root, release.release_id, "eval_results").to_pylist()
    assert {(r["agent"], r["model"], r["status"]) for r in rows} == {("openai:m1", "m1", "ok")}
