"""coworkenv_synthesize: the trigger form, the task graph, and a real run with `dag.test()`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.dags.conftest import AirflowHome

pytestmark = [pytest.mark.airflow, pytest.mark.xdist_group("airflow")]


@pytest.fixture
def synthesize_dag(airflow_home: AirflowHome):
    from airflow.dag_processing.dagbag import DagBag

    bag = DagBag(dag_folder=str(Path(__file__).resolve().parents[2] / "dags" / "coworkenv_synthesize.py"))
    assert not bag.import_errors, bag.import_errors
    return bag.get_dag("coworkenv_synthesize")


def test_form_and_graph(synthesize_dag):
    from coworkenv.pipeline.synthesize import SynthesisConfig

    dag = synthesize_dag
    assert dag.catchup is False and dag.schedule is None and "synthesis" in dag.tags and dag.doc_md
    params = dag.params.dump()
    assert set(params) == (set(SynthesisConfig.model_fields) - {"data_root"}) | {"llm_conn_id"}
    for name in params:
        assert dag.params.get_param(name).description, name
    assert dag.params.get_param("generator").schema["enum"] == ["procedural", "llm", "mixed"]
    graph = {t.task_id: sorted(t.downstream_task_ids) for t in dag.tasks}
    assert graph == {
        "plan": ["generate"], "generate": ["validate"], "validate": ["repair"], "repair": ["build"],
        "build": ["gate"], "gate": ["publish"], "publish": [],
    }  # fmt: skip
    assert [o.name for o in dag.get_task("publish").outlets] == ["coworkenv-task-release"]
    assert dag.get_task("gate").retries == 0 and dag.default_args["retries"] == 2


@pytest.mark.slow
def test_dag_test_publishes_a_gated_release(synthesize_dag, airflow_home: AirflowHome):
    from coworkenv.data.reader import latest_release, read_manifest, read_table

    conf = {"n": 12, "seed": 7, "shards": 2, "runtime": "none", "capabilities": ["data_analysis", "scheduling"], "difficulty_max": 3}
    run = synthesize_dag.test(run_conf=conf)
    assert str(run.state) == "success"
    root = airflow_home.env["COWORKENV_DATA_ROOT"]
    release = latest_release(root)
    manifest = read_manifest(root, release)
    assert manifest.row_counts["tasks"] == 12 and manifest.row_counts["sft"] == 12
    assert manifest.config["capabilities"] == ["data_analysis", "scheduling"]
    tasks = read_table(root, release, "tasks").to_pylist()
    assert all(t["difficulty"] <= 3 and t["oracle_score"] == 1.0 for t in tasks)
    assert all({"data_analysis", "scheduling"} & set(t["capabilities"]) for t in tasks)
    report = Path(root) / "runs"
    assert list(report.glob("*/quality/data_docs/validated/index.html"))
    assert json.loads((Path(root) / "releases" / release / "manifest.json").read_text())["release_id"] == release
