"""coworkenv_synthesize: the trigger form, the task graph, and a real run with `dag.test()`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.dags.conftest import AirflowHome, asset_events, rendered_map_indexes

pytestmark = [pytest.mark.airflow, pytest.mark.xdist_group("airflow")]


def test_form_is_generated_from_the_config_and_graph(synthesize_dag):
    from coworkenv.pipeline.config import SynthesisConfig, form_order
    from coworkenv.sandbox.choices import RUNTIME_CHOICES
    from coworkenv.synth.family import load_families

    dag = synthesize_dag
    assert dag.catchup is False and dag.schedule is None and "synthesis" in dag.tags and dag.doc_md
    params = dag.params.dump()
    assert list(params) == form_order(SynthesisConfig)  # every field, in order: one source for form, CLI and YAML
    for name, field in SynthesisConfig.model_fields.items():
        param = dag.params.get_param(name)
        assert param.description == field.description and param.schema["title"] == field.title, name
        assert params[name] == field.default, name
    assert dag.params.get_param("generator").schema["enum"] == ["procedural", "llm", "mixed"]
    assert dag.params.get_param("runtime").schema["enum"] == list(RUNTIME_CHOICES)
    assert dag.params.get_param("families").schema["items"]["enum"] == load_families().names()
    assert dag.params.get_param("families").schema["type"] == ["array", "null"]
    assert (
        dag.params.get_param("n").schema["exclusiveMinimum"] == 0
    )  # refused, not clamped by the form (test_dags_forms)
    graph = {t.task_id: sorted(t.downstream_task_ids) for t in dag.tasks}
    assert graph == {
        "plan": ["generate"],
        "generate": ["validate"],
        "validate": ["repair"],
        "repair": ["rollout"],
        "rollout": ["build"],
        "build": ["gate"],
        "gate": ["publish"],
        "publish": [],
    }
    assert [o.name for o in dag.get_task("publish").outlets] == ["coworkenv-task-release"]
    assert dag.get_task("gate").retries == 0 and dag.default_args["retries"] == 2


@pytest.mark.slow
def test_dag_test_publishes_a_gated_release(synthesize_dag, airflow_home: AirflowHome):
    from coworkenv.data.reader import latest_release, read_manifest, read_table

    conf = {
        "n": 12,
        "seed": 7,
        "shards": 2,
        "runtime": "none",
        "capabilities": ["data_analysis", "scheduling"],
        "difficulty_max": 3,
    }
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
    report = Path(root) / "runs" / run.run_id / "quality" / "data_docs"  # the folder is the run id the UI shows
    assert (report / "validated" / "index.html").is_file() and (report / "rollouts" / "index.html").is_file()
    assert json.loads((Path(root) / "releases" / release / "manifest.json").read_text())["release_id"] == release
    # the asset event says which release it was; each mapped instance says which shard it is
    assert asset_events(run.run_id) == {
        "coworkenv-task-release": [{"release_id": release, "row_counts": manifest.row_counts}]
    }
    assert rendered_map_indexes(run, "generate") == rendered_map_indexes(run, "validate") == ["shard 0", "shard 1"]


@pytest.mark.slow
def test_the_cli_publishes_the_same_release_as_the_dag(synthesize_dag, airflow_home: AirflowHome, tmp_path):
    """`coworkenv synthesize --config run.yaml --run-id <the DAG run's id>` outside Airflow: same release id, same
    tables (byte for byte), same config — one orchestration."""
    import subprocess
    import sys

    import yaml

    from coworkenv.data.reader import read_manifest

    conf = {
        "n": 10,
        "seed": 5,
        "shards": 2,
        "workers": 1,
        "families": ["mail_triage", "sheet_join", "injection_guard"],
        "repair_rounds": 1,
    }
    run = synthesize_dag.test(run_conf=conf)
    assert str(run.state) == "success"
    dag_manifest = read_manifest(airflow_home.env["COWORKENV_DATA_ROOT"], "latest")
    assert dag_manifest.run_id == run.run_id

    config = tmp_path / "run.yaml"
    config.write_text(yaml.safe_dump(conf), encoding="utf-8")
    cli_root = tmp_path / "cli-data"
    proc = subprocess.run(
        [
            str(Path(sys.executable).parent / "coworkenv"),
            "synthesize",
            "--config",
            str(config),
            "--run-id",
            run.run_id,
            "--data-root",
            str(cli_root),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    cli_manifest = read_manifest(cli_root, "latest")
    assert (
        cli_manifest.release_id == dag_manifest.release_id
        and f"published release {cli_manifest.release_id}" in proc.stdout
    )
    assert cli_manifest.row_counts == dag_manifest.row_counts and cli_manifest.row_counts["tasks"] > 0
    assert cli_manifest.content_hashes == dag_manifest.content_hashes
    assert cli_manifest.config == dag_manifest.config


@pytest.mark.slow
def test_a_failing_gate_fails_the_run_and_publishes_nothing(
    synthesize_dag, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """A run whose staged tasks table breaks a Great Expectations rule (one oracle score of 0.5, written over the
    built table before the gate reads it): the real gate fails, the run ends failed, `publish` never runs and
    `LATEST` still names the release of the run before."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    import coworkenv.pipeline.synthesis.build as build_stage
    from coworkenv.data.reader import latest_release, list_releases
    from coworkenv.pipeline.release_tables import gate_tables
    from coworkenv.pipeline.rundir import GATES_PASSED, RunDir
    from coworkenv.pipeline.synthesis import GATES
    from coworkenv.quality.gates import GateFailed

    root = tmp_path / "data"
    monkeypatch.setenv("COWORKENV_DATA_ROOT", str(root))  # a data root of its own: no other test's release in it
    conf = {"n": 4, "seed": 3, "shards": 1, "runtime": "none", "families": ["mail_triage"], "repair_rounds": 0}
    first = synthesize_dag.test(run_conf=conf)
    assert str(first.state) == "success"
    before = latest_release(root)
    assert before is not None and [m.release_id for m in list_releases(root)] == [before]
    latest_bytes = (root / "releases" / "LATEST").read_bytes()

    real_build = build_stage.build_tables

    def build_then_break_a_row(run: RunDir) -> dict[str, int]:
        rows = real_build(run)
        path = run.file("tables", "tasks.parquet")
        table = pq.read_table(path)
        i = table.schema.get_field_index("oracle_score")
        scores = table.column(i).to_pylist()
        scores[0] = 0.5
        pq.write_table(table.set_column(i, table.schema.field(i), pa.array(scores, table.schema.field(i).type)), path)
        return rows

    monkeypatch.setattr(
        build_stage, "build_tables", build_then_break_a_row
    )  # the DAG's build task imports it when it runs
    second = synthesize_dag.test(run_conf={**conf, "seed": 4})
    assert str(second.state) == "failed"
    states = {ti.task_id: str(ti.state) for ti in second.get_task_instances()}
    assert (states["build"], states["gate"], states["publish"]) == ("success", "failed", "upstream_failed"), states
    assert latest_release(root) == before and (root / "releases" / "LATEST").read_bytes() == latest_bytes
    assert [m.release_id for m in list_releases(root)] == [before]
    assert [p.name for p in (root / "releases").iterdir() if p.name not in ("LATEST", ".lock")] == [
        before
    ]  # no temporary folder left either

    run = RunDir.open(second.run_id, root)
    assert not run.file(*GATES_PASSED).exists()  # nothing recorded as gated
    assert (run.file("quality") / "data_docs" / "validated" / "index.html").exists()  # the failing gate's report
    with pytest.raises(GateFailed) as failed:  # the same gate again: it is GX's `oracle_scores_1` rule that failed
        gate_tables(run, GATES)
    assert "oracle_scores_1" in str(failed.value)
