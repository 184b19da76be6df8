"""A real `airflow standalone` (API server, scheduler, DAG processor, triggerer) driven through its REST API.

Starts Airflow in its own process group on a free port, triggers runs with a non-default `conf` exactly as the
UI's trigger form does, waits for them to finish, checks what they produced, then stops every process it started
by process-group id.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.dags.conftest import AIRFLOW_BIN, ROOT, AirflowHome

pytestmark = [pytest.mark.airflow, pytest.mark.slow, pytest.mark.integration, pytest.mark.xdist_group("airflow")]

STARTUP_S = 180
RUN_S = 600


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Standalone:
    def __init__(self, home: AirflowHome, port: int, log: Path):
        self.base = f"http://127.0.0.1:{port}"
        self.env = {
            **os.environ, **home.env,
            "PATH": f"{AIRFLOW_BIN.parent}{os.pathsep}{os.environ.get('PATH', '')}",  # standalone spawns `airflow ...`
            "AIRFLOW__API__PORT": str(port),
            "AIRFLOW__API__BASE_URL": self.base,
            "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": f"{self.base}/execution/",
            "AIRFLOW__SCHEDULER__MIN_FILE_PROCESS_INTERVAL": "5",
            "AIRFLOW__DAG_PROCESSOR__REFRESH_INTERVAL": "5",
        }  # fmt: skip
        self.home = home.home
        self.log = log
        self.process: subprocess.Popen | None = None
        self.token = ""

    def start(self) -> None:
        with self.log.open("w") as out:
            self.process = subprocess.Popen(
                [str(AIRFLOW_BIN), "standalone"], env=self.env, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )
        deadline = time.monotonic() + STARTUP_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"airflow standalone exited: {self.log.read_text()[-3000:]}")
            try:
                health = self.request("GET", "/api/v2/monitor/health", auth=False)
                if health.get("scheduler", {}).get("status") == "healthy" and self._login():
                    return
            except (urllib.error.URLError, ConnectionError, TimeoutError, json.JSONDecodeError):
                pass
            time.sleep(2)
        raise AssertionError(f"airflow standalone not healthy after {STARTUP_S} s: {self.log.read_text()[-3000:]}")

    def _login(self) -> bool:
        passwords = self.home / "simple_auth_manager_passwords.json.generated"
        if not passwords.exists():
            return False
        password = json.loads(passwords.read_text())["admin"]
        self.token = self.request("POST", "/auth/token", {"username": "admin", "password": password}, auth=False)["access_token"]
        return True

    def request(self, method: str, path: str, body: dict | None = None, auth: bool = True) -> dict:
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.base + path, data=data, method=method)
        req.add_header("Content-Type", "application/json")
        if auth:
            req.add_header("Authorization", f"Bearer {self.token}")
        with urllib.request.urlopen(req, timeout=30) as reply:
            return json.loads(reply.read() or b"{}")

    def wait_for_dag(self, dag_id: str) -> None:
        deadline = time.monotonic() + STARTUP_S
        while time.monotonic() < deadline:
            try:
                self.request("GET", f"/api/v2/dags/{dag_id}")
                return
            except urllib.error.HTTPError as exc:
                if exc.code != 404:
                    raise
            time.sleep(2)
        raise AssertionError(f"DAG {dag_id} never appeared")

    def trigger(self, dag_id: str, conf: dict) -> str:
        self.wait_for_dag(dag_id)
        return self.request("POST", f"/api/v2/dags/{dag_id}/dagRuns", {"logical_date": None, "conf": conf})["dag_run_id"]

    def wait_for_run(self, dag_id: str, run_id: str) -> str:
        deadline = time.monotonic() + RUN_S
        while time.monotonic() < deadline:
            state = self.request("GET", f"/api/v2/dags/{dag_id}/dagRuns/{run_id}")["state"]
            if state in ("success", "failed"):
                return state
            time.sleep(3)
        raise AssertionError(f"run {run_id} of {dag_id} did not finish in {RUN_S} s")

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        pgid = os.getpgid(self.process.pid)
        os.killpg(pgid, signal.SIGTERM)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pass
        try:
            os.killpg(pgid, signal.SIGKILL)  # stragglers: workers the supervisor did not reap
        except ProcessLookupError:
            pass
        self.process.wait(timeout=10)


@pytest.fixture(scope="module")
def standalone(airflow_home: AirflowHome, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Standalone]:
    server = Standalone(airflow_home, free_port(), tmp_path_factory.mktemp("standalone") / "standalone.log")
    try:
        server.start()
        yield server
    finally:
        server.stop()


def test_core_check_triggered_over_rest_with_conf(standalone: Standalone, task_file: Path) -> None:
    run_id = standalone.trigger("coworkenv_core_check", {"tasks_path": str(task_file), "fail_on_gate": True, "shard_size": 2})
    assert standalone.wait_for_run("coworkenv_core_check", run_id) == "success", standalone.log.read_text()[-3000:]
    xcom = standalone.request("GET", f"/api/v2/dags/coworkenv_core_check/dagRuns/{run_id}/taskInstances/summarize/xcomEntries/return_value")
    value = xcom["value"] if isinstance(xcom["value"], dict) else json.loads(xcom["value"])
    assert value["tasks"] == value["gate_passed"] >= 1


def test_synthesis_triggered_over_rest_publishes_a_gated_release(standalone: Standalone, airflow_home: AirflowHome) -> None:
    """The UI/REST path: a non-default conf, the sandboxed battery (default runtime), gates, atomic publication."""
    from coworkenv.data.reader import latest_release, read_manifest, verify_release

    conf = {"n": 16, "seed": 11, "shards": 2, "workers": 1, "difficulty_min": 2, "difficulty_max": 4,
            "families": ["csv_aggregate", "meeting_schedule"]}  # fmt: skip
    run_id = standalone.trigger("coworkenv_synthesize", conf)
    assert standalone.wait_for_run("coworkenv_synthesize", run_id) == "success", standalone.log.read_text()[-3000:]
    root = airflow_home.env["COWORKENV_DATA_ROOT"]
    manifest = read_manifest(root, latest_release(root))
    assert manifest.run_id == run_id and manifest.row_counts["tasks"] == 16
    assert manifest.config["families"] == ["csv_aggregate", "meeting_schedule"] and manifest.config["difficulty_min"] == 2
    assert verify_release(root, manifest.release_id) == []
    xcom = standalone.request("GET", f"/api/v2/dags/coworkenv_synthesize/dagRuns/{run_id}/taskInstances/publish/xcomEntries/return_value")
    value = xcom["value"] if isinstance(xcom["value"], dict) else json.loads(xcom["value"])
    assert value["release_id"] == manifest.release_id


def test_bad_settings_are_refused_over_rest_before_a_run_exists(standalone: Standalone) -> None:
    """The plugin's check in the real API server: 400 with the reason in the form's words, and no run made."""
    standalone.wait_for_dag("coworkenv_synthesize")
    runs = "/api/v2/dags/coworkenv_synthesize/dagRuns"
    before = standalone.request("GET", runs)["total_entries"]
    cases = {
        "Lowest difficulty (difficulty_min) 5 is above Highest difficulty (difficulty_max) 1": {"difficulty_min": 5, "difficulty_max": 1},
        "'nn' is not a setting of this run (did you mean Tasks (n)?)": {"nn": 20},
        "Tasks (n): Input should be greater than or equal to 1": {"n": -1},
    }
    for detail, conf in cases.items():
        with pytest.raises(urllib.error.HTTPError) as refused:
            standalone.request("POST", runs, {"logical_date": None, "conf": conf})
        assert refused.value.code == 400 and json.loads(refused.value.read()) == {"detail": detail}, conf
    assert standalone.request("GET", runs)["total_entries"] == before

