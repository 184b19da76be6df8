"""`make airflow-standalone`, exactly as the README gives it, started by a test: API server, scheduler, DAG processor
and triggerer in their own process group on a free port, over an Airflow home (which it migrates) and a data root of
its own.

The command runs with `.venv/bin` taken off `PATH` on purpose: a new user's shell does not have it, and
`airflow standalone` starts its children as `airflow ...` by name (the Makefile must make that work, not the test).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

from coworkenv.airflow_env import scripts_dir
from tests.dags.conftest import ROOT

STARTUP_S = 240
RUN_S = 600


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def user_path() -> str:
    """The caller's PATH without this venv's scripts folder: what a new user's shell has."""
    venv_bin = str(scripts_dir())
    return os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep) if p and p != venv_bin)


class Rest:
    """An Airflow API server's REST API as the simple auth manager's `admin` (its password from the home's file)."""

    def __init__(self, base: str, home: Path, log: Path):
        self.base = base
        self.home = home
        self.log = log
        self.token = ""

    def tail(self, chars: int = 3000) -> str:
        return self.log.read_text(errors="replace")[-chars:]

    @property
    def password(self) -> str:
        return json.loads((self.home / "simple_auth_manager_passwords.json.generated").read_text())["admin"]

    def _login(self) -> bool:
        if not (self.home / "simple_auth_manager_passwords.json.generated").exists():
            return False
        self.token = self.request("POST", "/auth/token", {"username": "admin", "password": self.password}, auth=False)[
            "access_token"
        ]
        return True

    def request(self, method: str, path: str, body: dict | None = None, auth: bool = True) -> dict:
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.base + path, data=data, method=method)
        req.add_header("Content-Type", "application/json")
        if auth:
            req.add_header("Authorization", f"Bearer {self.token}")
        with urllib.request.urlopen(req, timeout=30) as reply:
            return json.loads(reply.read() or b"{}")

    def refusal(self, path: str, body: dict) -> tuple[int, str]:
        """POST that must fail: its status and `detail`."""
        try:
            self.request("POST", path, body)
        except urllib.error.HTTPError as exc:
            detail = json.loads(exc.read() or b"{}").get("detail")
            return exc.code, detail if isinstance(detail, str) else json.dumps(detail)
        raise AssertionError(f"POST {path} was accepted")

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
        return self.request("POST", f"/api/v2/dags/{dag_id}/dagRuns", {"logical_date": None, "conf": conf})[
            "dag_run_id"
        ]

    def runs(self, dag_id: str) -> list[dict]:
        return self.request("GET", f"/api/v2/dags/{dag_id}/dagRuns?limit=100")["dag_runs"]

    def wait_for_run(self, dag_id: str, run_id: str) -> str:
        deadline = time.monotonic() + RUN_S
        while time.monotonic() < deadline:
            try:
                state = self.request("GET", f"/api/v2/dags/{dag_id}/dagRuns/{run_id}")["state"]
            except TimeoutError:  # a loaded machine's API server can miss one poll; the deadline still bounds the wait
                continue
            if state in ("success", "failed"):
                return state
            time.sleep(3)
        raise AssertionError(f"run {run_id} of {dag_id} did not finish in {RUN_S} s")


def error_lines(home: Path, dag_id: str, run_id: str) -> list[str]:
    """The error-level lines of every task log of a run (Airflow 3 writes one JSON object a line)."""
    folder = home / "logs" / f"dag_id={dag_id}" / f"run_id={run_id}"
    found = []
    for log in sorted(folder.rglob("*.log")):
        for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict) and record.get("level") in ("error", "critical"):
                found.append(f"{log.relative_to(folder)}: {record.get('event')} {record.get('task_id', '')}")
    assert list(folder.rglob("*.log")), f"no task logs under {folder}"
    return found


class Standalone(Rest):
    def __init__(self, home: Path, port: int, log: Path):
        super().__init__(f"http://127.0.0.1:{port}", home, log)
        self.data_root = home / "data"
        # Only the knobs the README documents for a second instance, plus faster DAG discovery for the test.
        keep = {k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW", "COWORKENV"))}
        self.env = {
            **keep,
            "PATH": user_path(),
            "COWORKENV_AIRFLOW_HOME": str(self.home),
            "COWORKENV_AIRFLOW_PORT": str(port),
            "COWORKENV_DATA_ROOT": str(self.data_root),
            "AIRFLOW__SCHEDULER__MIN_FILE_PROCESS_INTERVAL": "5",
            "AIRFLOW__DAG_PROCESSOR__REFRESH_INTERVAL": "5",
        }
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        make = shutil.which("make", path=self.env["PATH"])
        assert make, "make is not on PATH"
        with self.log.open("w") as out:
            self.process = subprocess.Popen(
                [make, "--no-print-directory", "airflow-standalone"],
                env=self.env,
                cwd=ROOT,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + STARTUP_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"make airflow-standalone exited: {self.tail()}")
            try:
                health = self.request("GET", "/api/v2/monitor/health", auth=False)
                if health.get("scheduler", {}).get("status") == "healthy" and self._login():
                    return
            except (urllib.error.URLError, ConnectionError, TimeoutError, json.JSONDecodeError):
                pass
            time.sleep(2)
        raise AssertionError(f"make airflow-standalone not healthy after {STARTUP_S} s: {self.tail()}")

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
