"""Every DAG file imports cleanly and stays thin; the core-check DAG has the agreed shape."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import ROOT  # noqa: E402

DAGS_FOLDER = ROOT / "dags"

DAG_FILES = sorted(DAGS_FOLDER.glob("*.py"))
STDLIB_OK = {"__future__", "os", "datetime", "pathlib", "typing", "collections", "json"}
# The pipeline: a DAG's Params come from its config model (pure pydantic, no heavy stack: checked below).
PIPELINE = "coworkenv.pipeline"
HEAVY = ("pandas", "pyarrow", "duckdb", "torch", "transformers", "great_expectations", "openai")


def test_there_are_dag_files():
    assert DAG_FILES, f"no DAG files in {DAGS_FOLDER}"


@pytest.mark.parametrize("path", DAG_FILES, ids=lambda p: p.name)
def test_dag_file_top_level_imports_are_thin(path: Path):
    """Only airflow.sdk, the pipeline and light stdlib at module level: heavy stacks load inside tasks."""
    tree = ast.parse(path.read_text())
    assert ast.get_docstring(tree), f"{path.name} has no module docstring (used as doc_md)"
    for node in tree.body:
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module or ""]
        else:
            continue
        for name in names:
            allowed = (
                name == "airflow.sdk"
                or name.startswith(("airflow.sdk.", PIPELINE + "."))
                or name.split(".")[0] in STDLIB_OK
            )
            assert allowed, f"{path.name}:{node.lineno} imports {name} at module level"


def test_what_a_dag_file_imports_of_the_pipeline_is_light():
    code = (
        "import sys\nimport coworkenv.pipeline.config, coworkenv.pipeline.airflow\n"
        "coworkenv.pipeline.config.SynthesisConfig.model_json_schema()\n"
        f"heavy = [m for m in {HEAVY!r} if m in sys.modules]\nsys.exit(f'heavy imports: {{heavy}}' if heavy else 0)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr or result.stdout


def test_library_does_not_import_airflow():
    code = (
        "import sys, coworkenv, coworkenv.cli, coworkenv.airflow_env, coworkenv.pipeline.core_check\n"
        "sys.exit('airflow imported' if any(m == 'airflow' or m.startswith('airflow.') for m in sys.modules) else 0)"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("path", DAG_FILES, ids=lambda p: p.name)
@pytest.mark.airflow
@pytest.mark.xdist_group("airflow")
def test_dagbag_imports_without_errors(airflow_home, path: Path):
    from airflow.dag_processing.dagbag import DagBag

    bag = DagBag(dag_folder=str(path))
    assert not bag.import_errors, bag.import_errors
    assert bag.dags, f"{path.name} defines no DAG"
    for dag in bag.dags.values():
        assert dag.catchup is False, dag.dag_id
        assert dag.tags, dag.dag_id
        assert dag.doc_md, dag.dag_id
        assert dag.default_args.get("retries", 0) >= 1, dag.dag_id


@pytest.mark.airflow
@pytest.mark.xdist_group("airflow")
def test_core_check_structure(core_check_dag):
    dag = core_check_dag
    assert dag.dag_id == "coworkenv_core_check"
    assert dag.schedule is None
    assert dag.catchup is False
    assert {"coworkenv", "core"} <= set(dag.tags)
    assert dag.doc_md and "grading-consistency gate" in dag.doc_md
    assert dag.default_args["retries"] >= 1
    assert set(dag.task_ids) == {"load_tasks", "check_shard", "summarize"}

    from airflow.sdk.definitions.mappedoperator import MappedOperator

    check = dag.get_task("check_shard")
    assert isinstance(check, MappedOperator), "check_shard must be mapped over shards"
    assert check.upstream_task_ids == {"load_tasks"}
    assert dag.get_task("summarize").upstream_task_ids == {"check_shard"}

    params = dag.params
    assert set(params.keys()) >= {"tasks_path", "fail_on_gate", "shard_size"}
    assert params.get_param("tasks_path").schema["type"] == "string"
    assert params.get_param("fail_on_gate").schema["type"] == "boolean"
    assert params["fail_on_gate"] is True
    assert params.get_param("shard_size").schema["type"] == "integer"
    for name in params.keys():
        assert params.get_param(name).description, f"param {name} has no description (trigger form)"


@pytest.mark.airflow
@pytest.mark.xdist_group("airflow")
def test_core_check_tasks_path_resolution(airflow_home, monkeypatch, tmp_path):
    """The default tasks_path is the repo's examples/tasks; relative paths follow COWORKENV_ROOT."""
    from coworkenv.pipeline.core_check import CoreCheckConfig

    monkeypatch.delenv("COWORKENV_ROOT", raising=False)
    assert CoreCheckConfig().tasks() == ROOT / "examples" / "tasks"
    (tmp_path / "examples" / "tasks").mkdir(parents=True)
    monkeypatch.setenv("COWORKENV_ROOT", str(tmp_path))
    assert CoreCheckConfig(tasks_path="examples/tasks").tasks() == tmp_path / "examples" / "tasks"
    (tmp_path / "t.jsonl").write_text("")
    assert CoreCheckConfig(tasks_path=str(tmp_path / "t.jsonl")).tasks() == tmp_path / "t.jsonl"
