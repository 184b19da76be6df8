"""The `cluster` profile (coworkenv/airflow_env.py) started on this machine by a test: a throwaway Postgres database and
Redis DB number, a fresh metadata DB migrated into it, the `gpu` pool, then the scheduler, the DAG processor, the API
server and Celery workers as local processes, each in its own process group.

Everything comes from the profile (`airflow_env("cluster")`, `COMMANDS`); the test changes only what lets it run beside
other Airflow instances on one machine (free ports, no log server, a pid file per worker, a worker name) and what makes
a dead worker show in seconds instead of minutes (the task heartbeat timeout). Processes are stopped by process id and
group, never by name, with the task processes they forked (the Task SDK puts each task in a group of its own).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import subprocess
import time
from pathlib import Path

import psutil

from coworkenv.airflow_env import COMMANDS, POSTGRES_URL, REDIS_URL, airflow_env, scripts_dir
from tests.dags.standalone import Rest, free_port
from tests.support import ROOT

STARTUP_S = 240
REDIS_CLAIM = "coworkenv-test-claim"
"""A key a test sets (SET NX) in the Redis DB number it takes, so that two tests never share one."""


def services_missing() -> str | None:
    """Why the cluster cannot start here (Postgres or Redis does not answer on its default address), else None."""
    import psycopg2
    import redis

    try:
        psycopg2.connect(
            POSTGRES_URL.replace("+psycopg2", "").rsplit("/", 1)[0] + "/postgres", connect_timeout=5
        ).close()
    except psycopg2.Error as exc:
        return f"PostgreSQL does not answer at 127.0.0.1:5432 as user postgres ({' '.join(str(exc).split())})"
    try:
        redis.Redis.from_url(REDIS_URL, socket_timeout=5).ping()
    except redis.RedisError as exc:
        return f"Redis does not answer at 127.0.0.1:6379 ({exc})"
    return None


@contextlib.contextmanager
def admin_cursor():
    """A cursor on the server's `postgres` database, outside any transaction (CREATE/DROP DATABASE need that)."""
    import psycopg2

    connection = psycopg2.connect(
        POSTGRES_URL.replace("+psycopg2", "").rsplit("/", 1)[0] + "/postgres", connect_timeout=5
    )
    try:
        connection.autocommit = True
        with connection.cursor() as cursor:
            yield cursor
    finally:
        connection.close()


class Cluster(Rest):
    def __init__(self, base: Path, heartbeat_timeout_s: int = 20):
        self.home = base / "home"
        self.data_root = base / "data"
        self.logs = base / "logs"
        for folder in (self.home, self.data_root, self.logs):
            folder.mkdir(parents=True, exist_ok=True)
        super().__init__(f"http://127.0.0.1:{free_port()}", self.home, self.logs / "api-server.log")
        self.database = f"coworkenv_test_{secrets.token_hex(6)}"
        self.redis_db: int | None = None
        self.heartbeat_timeout_s = heartbeat_timeout_s
        self.processes: dict[str, subprocess.Popen] = {}
        self.env: dict[str, str] = {}

    # --- the throwaway database and Redis DB ----------------------------------------------------------------------

    def _claim_redis_db(self) -> int:
        import redis

        for number in range(1, 16):
            client = redis.Redis.from_url(REDIS_URL.rsplit("/", 1)[0] + f"/{number}", socket_timeout=5)
            if client.dbsize() == 0 and client.set(REDIS_CLAIM, self.database, nx=True):
                if client.dbsize() == 1:  # nothing else arrived between the two calls
                    return number
                client.delete(REDIS_CLAIM)
        raise AssertionError("no empty Redis DB among 1-15")

    def create(self) -> None:
        """The Redis DB, the profile's variables, then `coworkenv airflow-init --profile cluster` as the docs have an
        operator run it: the database created, migrated, the `gpu` pool; run twice, the second time a no-op."""
        self.redis_db = self._claim_redis_db()
        port = int(self.base.rsplit(":", 1)[1])
        keep = {k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW", "COWORKENV"))}
        chosen = {
            "COWORKENV_DATABASE_URL": POSTGRES_URL.rsplit("/", 1)[0] + f"/{self.database}",
            "COWORKENV_BROKER_URL": REDIS_URL.rsplit("/", 1)[0] + f"/{self.redis_db}",
            "COWORKENV_DATA_ROOT": str(self.data_root),
            "COWORKENV_GPU_POOL_SLOTS": "1",
        }
        env = airflow_env("cluster", root=ROOT, home=self.home, port=port, environ={**keep, **chosen})
        self.env = {
            **keep,
            **chosen,
            **env,
            # beside other Airflow instances on this machine: the scheduler's health check on a free port
            "AIRFLOW__SCHEDULER__SCHEDULER_HEALTH_CHECK_SERVER_PORT": str(free_port()),
            # a worker that died is seen after this many seconds without a task heartbeat (default 300)
            "AIRFLOW__SCHEDULER__TASK_INSTANCE_HEARTBEAT_TIMEOUT": str(self.heartbeat_timeout_s),
            "AIRFLOW__SCHEDULER__TASK_INSTANCE_HEARTBEAT_TIMEOUT_DETECTION_INTERVAL": "2",
            "AIRFLOW__DAG_PROCESSOR__REFRESH_INTERVAL": "5",
        }
        for attempt in ("created", "already there"):
            init = subprocess.run(
                [str(scripts_dir() / "coworkenv"), "airflow-init", "--profile", "cluster"],
                env={**keep, **chosen, "COWORKENV_AIRFLOW_HOME": str(self.home), "COWORKENV_AIRFLOW_PORT": str(port)},
                cwd=ROOT,
                capture_output=True,
                text=True,
                timeout=300,
            )
            assert init.returncode == 0 and f"metadata database: {attempt}" in init.stderr, init.stderr[-3000:]
        assert "gpu" in self.shell("airflow pools list")

    def shell(self, line: str, timeout: float = 300) -> str:
        """One of the profile's shell lines (`airflow ...`) with this cluster's variables; its output."""
        result = subprocess.run(
            ["bash", "-c", line],
            env=self.env,
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=timeout,
        )
        assert result.returncode == 0, f"{line}: {result.stdout[-3000:]}"
        return result.stdout

    def drop(self) -> None:
        """The database and the Redis DB, emptied and dropped (after `stop`)."""
        import redis

        if self.redis_db is not None:
            redis.Redis.from_url(REDIS_URL.rsplit("/", 1)[0] + f"/{self.redis_db}", socket_timeout=5).flushdb()
            self.redis_db = None
        with admin_cursor() as cursor:
            cursor.execute(f'DROP DATABASE IF EXISTS "{self.database}" WITH (FORCE)')

    # --- processes ------------------------------------------------------------------------------------------------

    def start(self, name: str, argv: list[str], **env: str) -> None:
        """One of the profile's processes, in its own process group, its output in logs/<name>.log."""
        argv = [str(scripts_dir() / argv[0]), *argv[1:]] if argv[0] == "airflow" else argv
        with (self.logs / f"{name}.log").open("w") as out:
            self.processes[name] = subprocess.Popen(
                argv, env={**self.env, **env}, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )

    def start_worker(self, name: str, command: str, queues: str, concurrency: int) -> None:
        """A Celery worker from the profile's `command` on `queues`: named `name` (its task instances' host name, and its
        Celery node name), no log server (the API server reads the shared log folder) and a pid file of its own."""
        argv = list(COMMANDS[command])
        argv[argv.index("--queues") + 1] = queues
        argv[argv.index("--concurrency") + 1] = str(concurrency)
        argv += ["--celery-hostname", f"{name}@%h", "--skip-serve-logs", "--pid", str(self.home / f"{name}.pid")]
        self.start(name, argv, COWORKENV_WORKER_NAME=name)

    def log_of(self, name: str) -> str:
        return (self.logs / f"{name}.log").read_text(errors="replace")

    def tail(self, chars: int = 3000) -> str:
        return "\n".join(f"--- {name}\n{self.log_of(name)[-chars:]}" for name in self.processes)

    def check_alive(self) -> None:
        for name, process in self.processes.items():
            if process.poll() is not None:
                raise AssertionError(f"{name} exited with {process.returncode}: {self.log_of(name)[-3000:]}")

    def wait_until_ready(self, workers: list[str]) -> None:
        """The scheduler healthy, the API server signing in, every worker's Celery node ready."""
        deadline = time.monotonic() + STARTUP_S
        while time.monotonic() < deadline:
            self.check_alive()
            try:
                health = self.request("GET", "/api/v2/monitor/health", auth=False)
                healthy = (
                    health.get("scheduler", {}).get("status") == "healthy"
                    and health.get("dag_processor", {}).get("status") == "healthy"
                )
                if (
                    healthy
                    and self._login()
                    and all(f"{name}@" in self.log_of(name) and " ready." in self.log_of(name) for name in workers)
                ):
                    return
            except OSError:
                pass
            time.sleep(1)
        raise AssertionError(f"the cluster was not ready after {STARTUP_S} s: {self.tail()}")

    def tree(self, name: str) -> list[psutil.Process]:
        """A process and everything it started (the task processes too, which live in groups of their own)."""
        try:
            root = psutil.Process(self.processes[name].pid)
            return [root, *root.children(recursive=True)]
        except psutil.NoSuchProcess:
            return []

    def freeze(self, name: str) -> set[int]:
        """SIGSTOP a process and everything it started, group by group; returns the groups, for `thaw` or `kill`.
        While frozen, nothing in the tree can fork, finish a task or report a task's state."""
        process = self.processes[name]
        groups = {process.pid}
        _signal_group(process.pid, signal.SIGSTOP)
        for _ in range(2):  # a child forked into a new group between listing and stopping shows on the second pass
            for child in self.tree(name):
                with contextlib.suppress(ProcessLookupError):
                    group = os.getpgid(child.pid)
                    if group not in groups:
                        groups.add(group)
                        _signal_group(group, signal.SIGSTOP)
        return groups

    def thaw(self, groups: set[int]) -> None:
        for group in groups:
            _signal_group(group, signal.SIGCONT)

    def kill(self, name: str, sig: signal.Signals = signal.SIGKILL, grace_s: float = 0) -> None:
        """`sig` to the process's group and to the group of everything it started; SIGKILL what is left after `grace_s`."""
        process = self.processes[name]
        if process.poll() is not None:
            return
        groups = self.freeze(name)
        for group in groups:
            _signal_group(group, sig)
        self.thaw(groups)  # a stopped process acts on SIGTERM only once continued
        try:
            process.wait(timeout=grace_s or 0.001)
        except subprocess.TimeoutExpired:
            pass
        for group in groups:
            _signal_group(group, signal.SIGKILL)
        process.wait(timeout=30)

    def stop(self) -> None:
        """Every process this cluster started (SIGTERM, then SIGKILL after a grace period), workers first."""
        for name in sorted(self.processes, key=lambda n: n.startswith(("scheduler", "api-server", "dag-processor"))):
            self.kill(name, signal.SIGTERM, grace_s=20)


def _signal_group(group: int, sig: signal.Signals) -> None:
    try:
        os.killpg(group, sig)
    except (ProcessLookupError, PermissionError):
        pass
