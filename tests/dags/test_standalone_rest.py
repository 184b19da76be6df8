"""`make airflow-standalone` (API server, scheduler, DAG processor, triggerer) driven through its REST API.

Triggers runs with a non-default `conf` exactly as the UI's trigger form does, waits for them to finish and checks
what they produced (the server: tests/dags/standalone.py, shared with the browser test).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.dags.standalone import Standalone, error_lines

pytestmark = [pytest.mark.airflow, pytest.mark.slow, pytest.mark.integration, pytest.mark.xdist_group("airflow")]


def test_core_check_triggered_over_rest_with_conf(standalone: Standalone, task_file: Path) -> None:
    run_id = standalone.trigger(
        "coworkenv_core_check", {"tasks_path": str(task_file), "fail_on_gate": True, "shard_size": 2}
    )
    assert standalone.wait_for_run("coworkenv_core_check", run_id) == "success", standalone.tail()
    xcom = standalone.request(
        "GET", f"/api/v2/dags/coworkenv_core_check/dagRuns/{run_id}/taskInstances/summarize/xcomEntries/return_value"
    )
    value = xcom["value"] if isinstance(xcom["value"], dict) else json.loads(xcom["value"])
    assert value["tasks"] == value["gate_passed"] >= 1


def test_synthesis_triggered_over_rest_publishes_a_gated_release(standalone: Standalone) -> None:
    """The UI/REST path: a non-default conf, the sandboxed battery (default runtime), gates, atomic publication."""
    from coworkenv.data.reader import latest_release, read_manifest, verify_release

    conf = {
        "n": 16,
        "seed": 11,
        "shards": 2,
        "workers": 1,
        "difficulty_min": 2,
        "difficulty_max": 4,
        "families": ["csv_aggregate", "meeting_schedule"],
    }
    run_id = standalone.trigger("coworkenv_synthesize", conf)
    assert standalone.wait_for_run("coworkenv_synthesize", run_id) == "success", standalone.tail()
    root = standalone.data_root
    manifest = read_manifest(root, latest_release(root))
    assert manifest.run_id == run_id and manifest.row_counts["tasks"] == 16
    assert (
        manifest.config["families"] == ["csv_aggregate", "meeting_schedule"] and manifest.config["difficulty_min"] == 2
    )
    assert verify_release(root, manifest.release_id) == []
    xcom = standalone.request(
        "GET", f"/api/v2/dags/coworkenv_synthesize/dagRuns/{run_id}/taskInstances/publish/xcomEntries/return_value"
    )
    value = xcom["value"] if isinstance(xcom["value"], dict) else json.loads(xcom["value"])
    assert value["release_id"] == manifest.release_id
    assert error_lines(standalone.home, "coworkenv_synthesize", run_id) == []


def test_an_evaluation_triggered_over_rest_logs_no_error(standalone: Standalone) -> None:
    """A successful run says nothing at error level (an operator reads an error line as something to fix)."""
    from coworkenv.data.reader import list_releases
    from coworkenv.eval.suite import build_bench

    bench = build_bench(n=3, data_root=standalone.data_root).release_id
    run_id = standalone.trigger("coworkenv_evaluate", {"trials": 1, "workers": 1})
    assert standalone.wait_for_run("coworkenv_evaluate", run_id) == "success", standalone.tail()
    (evaluation,) = [m for m in list_releases(standalone.data_root) if m.kind == "eval" and m.run_id == run_id]
    assert evaluation.parent == bench
    assert error_lines(standalone.home, "coworkenv_evaluate", run_id) == []


def test_bad_settings_are_refused_over_rest_before_a_run_exists(standalone: Standalone) -> None:
    """The plugin's check in the real API server: 400 with the reason in the form's words, and no run made."""
    standalone.wait_for_dag("coworkenv_synthesize")
    runs = "/api/v2/dags/coworkenv_synthesize/dagRuns"
    before = standalone.request("GET", runs)["total_entries"]
    cases = {
        "Lowest difficulty (difficulty_min) 5 is above Highest difficulty (difficulty_max) 1": {
            "difficulty_min": 5,
            "difficulty_max": 1,
        },
        "'nn' is not a setting of this run (did you mean Tasks (n)?)": {"nn": 20},
        "Tasks (n): Input should be greater than or equal to 1": {"n": -1},
    }
    for detail, conf in cases.items():
        assert standalone.refusal(runs, {"logical_date": None, "conf": conf}) == (400, detail), conf
    assert standalone.request("GET", runs)["total_entries"] == before


def test_a_nightly_turn_triggered_over_rest_logs_no_error(standalone: Standalone) -> None:
    """One turn of the loop on a reduced budget, every stage a task of the real scheduler: success, and no line at
    error level in any of its task logs."""
    from coworkenv.eval.suite import build_bench
    from tests.dags.test_dags_nightly import reduced_turn

    bench = build_bench(4, seed=7, data_root=standalone.data_root, runtime="none", workers=1)
    run_id = standalone.trigger("coworkenv_nightly", reduced_turn(bench.release_id, "rest-turn", budget=6))
    assert standalone.wait_for_run("coworkenv_nightly", run_id) == "success", standalone.tail()
    assert error_lines(standalone.home, "coworkenv_nightly", run_id) == []
