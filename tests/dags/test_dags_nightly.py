"""coworkenv_nightly: the schedule, the trigger form (generated from NightlyConfig), the task graph, its pool and
assets, and a real run with `dag.test()` on a reduced budget: the registry starts from the tiny model, one turn
trains and evaluates a candidate and records the decision."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.dags.conftest import AirflowHome, asset_events
from tests.pipeline.test_jobs import NIGHTLY_STAGES as STAGES

pytestmark = [pytest.mark.airflow, pytest.mark.xdist_group("airflow")]


def test_schedule_form_graph_pool_and_assets(nightly_dag):
    from coworkenv.pipeline.config import NightlyConfig, form_order
    from coworkenv.pipeline.nightly import STAGES as LOOP_STAGES

    dag = nightly_dag
    assert dag.schedule == "@daily" or str(dag.timetable.summary) == "@daily"
    assert dag.catchup is False and dag.max_active_runs == 1 and dag.doc_md and dag.description
    params = dag.params.dump()
    assert list(params) == form_order(NightlyConfig)
    for name, field in NightlyConfig.model_fields.items():
        param = dag.params.get_param(name)
        assert param.description == field.description and param.schema["title"] == field.title, name
    assert dag.params.get_param("method").schema["enum"] == ["sft", "grpo", "gdpo", "dpo"]
    assert dag.params.get_param("plan").schema["enum"] == ["guided", "uniform"]
    assert tuple(t.task_id for t in dag.topological_sort()) == STAGES == LOOP_STAGES
    graph = {t.task_id: sorted(t.downstream_task_ids) for t in dag.tasks}
    assert graph == {a: [b] for a, b in zip(STAGES, STAGES[1:], strict=False)} | {"new_profile": []}
    gpu = {t.task_id for t in dag.tasks if t.queue == "gpu"}
    assert gpu == {"profile", "rollouts", "train", "evaluate"}  # the stages that run a local model
    assert all(dag.get_task(t).pool == "gpu" for t in gpu)
    assert {t.queue for t in dag.tasks if t.task_id not in gpu} == {"default"}
    assert {t.pool for t in dag.tasks if t.task_id not in gpu} == {"default_pool"}
    assert all(dag.get_task(t).retries == 0 for t in ("gate_tasks", "gate_rollouts", "gate_eval"))
    outlets = {t.task_id: [o.name for o in t.outlets] for t in dag.tasks if t.outlets}
    assert outlets == {
        "gate_tasks": ["coworkenv-training-release"],
        "gate_rollouts": ["coworkenv-rollouts"],
        "train": ["coworkenv-candidate-model"],
        "gate_eval": ["coworkenv-eval-report"],
        "promote": ["coworkenv-current-model"],
        "new_profile": ["coworkenv-capability-profile"],
    }


def test_training_on_kubernetes_without_the_provider_is_one_clear_import_error(airflow_home: AirflowHome, monkeypatch):
    """COWORKENV_TRAIN_ON=kubernetes makes `train` a KubernetesPodOperator; the provider is optional, so a deployment
    without it sees why in the DAG's import error (with it, the task runs `coworkenv nightly-stage train`)."""
    from airflow.dag_processing.dagbag import DagBag

    from tests.dags.conftest import DAGS_FOLDER

    monkeypatch.setenv("COWORKENV_TRAIN_ON", "kubernetes")
    bag = DagBag(dag_folder=str(DAGS_FOLDER / "coworkenv_nightly.py"))
    try:
        import airflow.providers.cncf.kubernetes  # noqa: F401
    except ImportError:
        (error,) = bag.import_errors.values()
        assert "COWORKENV_TRAIN_ON=kubernetes needs the apache-airflow-providers-cncf-kubernetes package" in error
        return
    task = bag.get_dag("coworkenv_nightly").get_task("train")
    assert type(task).__name__ == "KubernetesPodOperator" and task.pool == "gpu"
    assert task.pod_template_dict["spec"]["containers"][0]["command"][:3] == ["coworkenv", "nightly-stage", "train"]


def test_bad_settings_fail_the_first_task_without_retries(nightly_dag):
    run = nightly_dag.test(run_conf={"suite": "no-such-release", "runtime": "none", "workers": 1})
    states = {ti.task_id: str(ti.state) for ti in run.get_task_instances()}
    assert str(run.state) == "failed" and states["profile"] == "failed"
    assert all(states[t] in ("upstream_failed", "None") for t in STAGES[1:])


def reduced_turn(suite: str, model_name: str, budget: int) -> dict:
    """A nightly turn small enough for a test: the tiny model, two SFT steps, one trial per task, no sandbox."""
    return {
        "suite": suite,
        "budget": budget,
        "trials": 1,
        "eval_trials": 1,
        "sft_steps": 2,
        "max_new_tokens": 16,
        "runtime": "none",
        "workers": 1,
        "model_name": model_name,
    }


@pytest.mark.slow
def test_dag_test_runs_one_turn_on_a_reduced_budget(nightly_dag, airflow_home: AirflowHome):
    from coworkenv.eval.suite import build_bench
    from coworkenv.models import list_models
    from coworkenv.pipeline.nightly import nightly_file, read_state
    from coworkenv.pipeline.rundir import RunDir

    root = Path(airflow_home.env["COWORKENV_DATA_ROOT"])
    bench = build_bench(6, seed=7, data_root=root, runtime="none", workers=1)
    conf = reduced_turn(bench.release_id, "dag-test", budget=8)
    run = nightly_dag.test(run_conf=conf)
    assert str(run.state) == "success"
    assert {ti.task_id: str(ti.state) for ti in run.get_task_instances()} == dict.fromkeys(STAGES, "success")
    loop = RunDir.open(run.run_id, root)
    assert list(read_state(loop)) == list(STAGES)
    decision = json.loads(nightly_file(loop, "decision.json").read_text())
    assert decision["candidate"] == "dag-test:v2" and decision["reason"]
    # every asset event says what it was: the stage's result (releases, the candidate, the decision, the profile)
    state = read_state(loop)
    assert asset_events(run.run_id) == {
        "coworkenv-training-release": [state["gate_tasks"]],
        "coworkenv-rollouts": [state["gate_rollouts"]],
        "coworkenv-candidate-model": [state["train"]],
        "coworkenv-eval-report": [state["gate_eval"]],
        "coworkenv-current-model": [state["promote"]],
        "coworkenv-capability-profile": [state["new_profile"]],
    }
    assert state["gate_tasks"]["release_id"] and state["train"]["candidate"] == "dag-test:v2"
    assert {m.ref for m in list_models(root, "dag-test")} == {"dag-test:v1", "dag-test:v2"}
