"""coworkenv_synthesize with an LLM endpoint, run with `dag.test()` on the session's real metadata DB: LLM generation and
LLM repair through an Airflow connection (the key is the connection's password), and through a base URL with the key
in an environment variable. The endpoint sits behind a misbehaving proxy that echoes the request's headers and the
key in its errors and replies (`tests/support/leaky_endpoint.py`): the runs still publish the endpoint's good work,
and no file under the data root or the Airflow home (task logs and the metadata DB included), no XCom value, no
Parquet cell and nothing the run printed holds the key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.dags.conftest import AirflowHome
from tests.support.leaky_endpoint import (
    LEAK_FORMS,
    PLANTED_KEY,
    leaks_in_files,
    leaks_in_parquet,
    leaks_in_xcoms,
    leaky_endpoint,
)

pytestmark = [pytest.mark.airflow, pytest.mark.xdist_group("airflow"), pytest.mark.slow]

CONF = {
    "generator": "llm",
    "n": 6,
    "seed": 3,
    "shards": 1,
    "workers": 1,
    "repair_rounds": 2,
    "capabilities": ["retrieval"],
    "difficulty_min": 2,
    "difficulty_max": 2,
    "llm_concurrency": 1,
}
KEY_VAR = "LEAKY_LLM_AUTH"  # a name that does not say "key": only the client's own registration can scrub its value


def assert_published_the_endpoint_s_work(airflow_home: AirflowHome, run, server) -> None:
    """The release holds the endpoint's valid task and the task its repair model fixed (the repairs
    table names the LLM as the repairer); the rest were recorded, redacted, and not published."""
    from coworkenv.data.reader import read_manifest, read_table
    from coworkenv.pipeline.rundir import RunDir

    assert (
        server.generated == 6 and server.repairs >= 2
    )  # every generation answer was asked for; both broken tasks went to the LLM
    root = airflow_home.env["COWORKENV_DATA_ROOT"]
    manifest = read_manifest(root, "latest")
    assert manifest.run_id == run.run_id
    tasks = {t["task_id"]: t for t in read_table(root, manifest.release_id, "tasks").to_pylist()}
    (repaired,) = [task_id for task_id in tasks if task_id.endswith("-r1")]
    assert len(tasks) == 2 and all(t["family"] == "llm" and t["oracle_score"] == 1.0 for t in tasks.values())
    assert tasks[repaired]["parent_id"] == repaired.removesuffix("-r1")
    repairs = read_table(root, manifest.release_id, "repairs").to_pylist()
    assert [(r["task_id"], r["strategy"]) for r in repairs if r["valid_after"]] == [(repaired, "llm")]
    run_dir = RunDir.open(run.run_id, root)
    rejections = [
        json.loads(line)
        for line in run_dir.shard_file("generated", 0, "rejections").read_text(encoding="utf-8").splitlines()
    ]
    assert sorted(r["code"] for r in rejections) == ["http_error", "http_error", "unparseable"]
    assert all("[REDACTED]" in r["reason"] for r in rejections)
    attempts = [
        json.loads(line) for line in run_dir.file("repaired", "attempts.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    assert any(
        a["error"] and "authorization: [REDACTED]" in a["error"] for a in attempts
    )  # the repair model's header dump


def assert_no_secret_anywhere(airflow_home: AirflowHome, printed: str) -> None:
    root = Path(airflow_home.env["COWORKENV_DATA_ROOT"])
    assert (
        "published release" in printed
    )  # the task logs were captured: dag.test() writes them to the console and the log
    assert [form for form in LEAK_FORMS if form in printed] == []
    assert leaks_in_files(root, airflow_home.home) == []  # run files, releases, task logs, the metadata DB itself
    assert leaks_in_parquet(root) == []
    assert leaks_in_xcoms(airflow_home.home / "airflow.db") == []


def test_llm_generation_and_repair_through_an_airflow_connection(
    synthesize_dag, airflow_home, monkeypatch, capfd, caplog
):
    """The issue's failing path: `llm_conn_id` set and a task no rule can fix — the repair task gets an LLM repairer
    built from the connection, and its patch is published."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with leaky_endpoint() as server:
        conn = {
            "conn_type": "http",
            "host": f"http://127.0.0.1:{server.server_port}/v1",
            "password": PLANTED_KEY,
            "extra": {"model": "proxy-model", "max_retries": 0},
        }
        monkeypatch.setenv(
            "AIRFLOW_CONN_LEAKY_LLM", json.dumps(conn)
        )  # the key is in no file: only this variable holds it
        run = synthesize_dag.test(run_conf={**CONF, "llm_conn_id": "leaky_llm", "runtime": "none"})
    captured = capfd.readouterr()
    assert str(run.state) == "success", captured.err[-3000:]
    assert_no_secret_anywhere(airflow_home, captured.out + captured.err + caplog.text)  # the stages' summaries too
    assert_published_the_endpoint_s_work(airflow_home, run, server)


def test_llm_generation_and_repair_with_the_key_in_an_environment_variable(
    synthesize_dag, airflow_home, monkeypatch, capfd, caplog
):
    """A base URL and model in the run's settings, the key in the variable they name; the default (sandboxed) runtime."""
    monkeypatch.setenv(KEY_VAR, PLANTED_KEY)
    with leaky_endpoint() as server:
        endpoint = {
            "llm_base_url": f"http://127.0.0.1:{server.server_port}/v1",
            "llm_model": "proxy-model",
            "llm_api_key_env": KEY_VAR,
        }
        run = synthesize_dag.test(run_conf={**CONF, **endpoint, "seed": 4})
    captured = capfd.readouterr()
    assert str(run.state) == "success", captured.err[-3000:]
    assert_no_secret_anywhere(airflow_home, captured.out + captured.err + caplog.text)  # the stages' summaries too
    assert_published_the_endpoint_s_work(airflow_home, run, server)
