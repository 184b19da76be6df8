"""Airflow's setup as environment variables, one profile per shape: `embedded` (SQLite, LocalExecutor, one machine)
and `cluster` (Postgres metadata DB, CeleryExecutor with Redis as broker, a `default` and a `gpu` queue).

One source of truth for the Makefile and the shell (`coworkenv airflow-env [--profile cluster]`), the tests and
docker-compose.yml (tests/dags/test_compose.py checks the compose file against `PROFILES` and `COMMANDS`).
No Airflow import here: the library must stay importable without it.
"""

from __future__ import annotations

import os
import re
import secrets
import socket
import sysconfig
from collections.abc import Mapping
from pathlib import Path

from coworkenv.errors import CoworkEnvError

HF_OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}

DEFAULT_QUEUE = "default"
GPU_QUEUE = "gpu"
GPU_POOL = "gpu"
"""Where GPU stages go (training, local-model rollouts and evaluation): the `gpu` queue, which only GPU workers
listen on, and the `gpu` pool, whose slots cap how many run at once (`COWORKENV_GPU_POOL_SLOTS`)."""

ROOT_ENV = "COWORKENV_ROOT"
"""The checkout the workers read dags/, examples/ and relative task paths from (every profile sets it)."""

POSTGRES_URL = "postgresql+psycopg2://postgres@127.0.0.1:5432/airflow"
REDIS_URL = "redis://127.0.0.1:6379/0"

PROFILES: dict[str, dict[str, str]] = {
    "embedded": {
        "AIRFLOW__CORE__EXECUTOR": "LocalExecutor",
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": "sqlite:///${AIRFLOW_HOME}/airflow.db",
        "AIRFLOW__CORE__PARALLELISM": "4",
    },
    "cluster": {
        "AIRFLOW__CORE__EXECUTOR": "CeleryExecutor",
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"${{COWORKENV_DATABASE_URL:-{POSTGRES_URL}}}",
        "AIRFLOW__CELERY__BROKER_URL": f"${{COWORKENV_BROKER_URL:-{REDIS_URL}}}",
        # Results in the metadata DB, not Redis: Airflow's Celery provider "highly recommends" a database result
        # backend (its default is sql_alchemy_conn with `db+`), and so does the official compose file.
        "AIRFLOW__CELERY__RESULT_BACKEND": f"db+${{COWORKENV_DATABASE_URL:-{POSTGRES_URL}}}",
        "AIRFLOW__OPERATORS__DEFAULT_QUEUE": DEFAULT_QUEUE,
        "AIRFLOW__CORE__PARALLELISM": "${AIRFLOW_PARALLELISM:-32}",
        "AIRFLOW__CORE__AUTH_MANAGER": "airflow.api_fastapi.auth.managers.simple.simple_auth_manager.SimpleAuthManager",
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS": "${AIRFLOW_USERS:-admin:admin}",
        "AIRFLOW__CORE__HOSTNAME_CALLABLE": "coworkenv.airflow_env.worker_hostname",
        "AIRFLOW__SCHEDULER__ENABLE_HEALTH_CHECK": "True",
        "COWORKENV_GPU_POOL_SLOTS": "${COWORKENV_GPU_POOL_SLOTS:-1}",
    },
}
"""What each profile sets beyond the settings every profile shares (`airflow_env`). Values use docker compose's
interpolation, `${NAME:-default}`: the variable NAME, when set and not empty, overrides the default. The cluster's
services are on this machine by default (Postgres with trust auth as user `postgres`, database `airflow`; Redis DB 0);
point `COWORKENV_DATABASE_URL` and `COWORKENV_BROKER_URL` elsewhere. No secret is ever written here."""

COMMANDS: dict[str, list[str]] = {
    "init": [
        "airflow db migrate",
        f"airflow pools set {GPU_POOL} ${{COWORKENV_GPU_POOL_SLOTS:-1}} 'training and local-model rollouts'",
    ],
    "api-server": ["airflow", "api-server"],
    "scheduler": ["airflow", "scheduler"],
    "dag-processor": ["airflow", "dag-processor"],
    "triggerer": ["airflow", "triggerer"],
    "worker": [
        "airflow",
        "celery",
        "worker",
        "--queues",
        DEFAULT_QUEUE,
        "--concurrency",
        "${COWORKENV_WORKER_CONCURRENCY:-4}",
    ],
    "worker-gpu": ["airflow", "celery", "worker", "--queues", GPU_QUEUE, "--concurrency", "1"],
}
"""The cluster's processes. `init` is shell lines run once, in order (migrate the metadata DB, then size the `gpu`
pool); the rest are one process each. A GPU worker runs one task at a time: the pool and the queue keep training
and local-model stages off the CPU workers, and CPU shards off the GPU."""

HOMES: dict[str, str] = {"embedded": ".airflow", "cluster": ".airflow-cluster"}
"""Each profile's Airflow home under the checkout (its secret, logs and, embedded, its SQLite DB), unless
`COWORKENV_AIRFLOW_HOME` moves it: the two profiles never share a secret or a log folder."""

_VARIABLE = re.compile(r"\$\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?::-(?P<default>[^}]*))?\}")


def expand(value: str, environ: Mapping[str, str]) -> str:
    """`${NAME:-default}` and `${NAME}` as docker compose reads them: NAME's value when set and not empty."""
    return _VARIABLE.sub(lambda m: environ.get(m["name"]) or (m["default"] or ""), value)


def project_root() -> Path:
    """The checkout this package runs from (editable install), else the working directory."""
    here = Path(__file__).resolve().parents[1]
    return here if (here / "dags").is_dir() else Path.cwd()


def _jwt_secret(home: Path) -> str:
    """A per-checkout secret, generated once and kept out of the repo (AIRFLOW_HOME is git-ignored)."""
    path = home / "jwt_secret"
    if not path.exists():
        home.mkdir(parents=True, exist_ok=True)
        path.write_text(secrets.token_hex(48))
        path.chmod(0o600)
    return path.read_text().strip()


def scripts_dir() -> Path:
    """Where this interpreter's console scripts are (`.venv/bin`): `airflow standalone` starts its scheduler, API server
    and the rest as `airflow ...` by name, so that folder must lead `PATH` or every child dies unseen."""
    return Path(sysconfig.get_path("scripts"))


def worker_hostname() -> str:
    """The host name a task instance records (`[core] hostname_callable` in the cluster profile): `COWORKENV_WORKER_NAME`
    when set, else the machine's. Several workers on one machine (sharing its log folder) are then told apart in the UI
    and the REST API; one worker per machine or container, as in docker-compose.yml, leaves it unset."""
    return os.environ.get("COWORKENV_WORKER_NAME") or socket.getfqdn()


def _data_root(value: str | None, root: Path) -> str:
    """A local data root as an absolute path; an fsspec URL (s3://, memory://, file://) as given."""
    if value and "://" in value:
        return value
    return str(Path(value or root / "data").resolve())


def airflow_env(
    profile: str | None = None,
    root: Path | None = None,
    home: Path | None = None,
    port: int | None = None,
    environ: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """A profile's variables (`COWORKENV_AIRFLOW_PROFILE`, else `embedded`), read from `environ` (the process's by
    default). `COWORKENV_AIRFLOW_HOME`, `COWORKENV_AIRFLOW_PORT` and `COWORKENV_DATA_ROOT`, when set, move the metadata DB
    (embedded) and logs, the UI's port and the data (a second instance beside the first, a test)."""
    environ = os.environ if environ is None else environ
    # An empty --profile is a mistake, not "the default": only an absent one falls back.
    name = profile if profile is not None else (environ.get("COWORKENV_AIRFLOW_PROFILE") or "embedded")
    if name not in PROFILES:
        raise CoworkEnvError(f"Airflow profile {name!r}: unknown; the profiles are {', '.join(PROFILES)}")
    root = (root or project_root()).resolve()
    home = (home or Path(environ.get("COWORKENV_AIRFLOW_HOME") or root / HOMES[name])).resolve()
    port = port or int(environ.get("COWORKENV_AIRFLOW_PORT") or 8080)
    shared = {
        "PATH": os.pathsep.join([str(scripts_dir()), environ.get("PATH", "")]),
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__CORE__DAGS_FOLDER": str(root / "dags"),
        "AIRFLOW__CORE__PLUGINS_FOLDER": str(root / "plugins"),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION": "False",
        "AIRFLOW__API__HOST": "127.0.0.1",
        "AIRFLOW__API__PORT": str(port),
        "AIRFLOW__API__BASE_URL": f"http://127.0.0.1:{port}",
        "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": f"http://127.0.0.1:{port}/execution/",
        "AIRFLOW__API_AUTH__JWT_SECRET": _jwt_secret(home),
        "AIRFLOW__LOGGING__BASE_LOG_FOLDER": str(home / "logs"),
        ROOT_ENV: str(root),
        "COWORKENV_DATA_ROOT": _data_root(environ.get("COWORKENV_DATA_ROOT"), root),
        **HF_OFFLINE,
    }
    variables = {**environ, "AIRFLOW_HOME": str(home)}
    return {**shared, **{key: expand(value, variables) for key, value in PROFILES[name].items()}}


def embedded_env(root: Path | None = None, home: Path | None = None, port: int | None = None) -> dict[str, str]:
    """The embedded profile's variables (SQLite under the home, LocalExecutor), whatever profile is selected."""
    return airflow_env("embedded", root=root, home=home, port=port)


SECRET_FILES = {"AIRFLOW__API_AUTH__JWT_SECRET": "jwt_secret"}
"""Variables whose value is a secret kept in a file under AIRFLOW_HOME: printed as a reference to that file."""


def shell_exports(env: dict[str, str]) -> str:
    """`export` lines for a shell; a secret (`SECRET_FILES`) is read from its file when the shell runs them, never
    printed (the lines end up in terminals, logs and CI output)."""
    import shlex

    lines = []
    for key, value in env.items():
        secret = Path(env.get("AIRFLOW_HOME", ""), SECRET_FILES[key]) if key in SECRET_FILES else None
        if secret is not None and secret.is_file() and secret.read_text().strip() == value:
            lines.append(f'export {key}="$(cat {shlex.quote(str(secret))})"')
        else:
            lines.append(f"export {key}={shlex.quote(value)}")
    return "\n".join(lines)


def create_database(url: str) -> bool:
    """The metadata DB of a profile made where it is missing: a Postgres database (through the server's `postgres`
    database), or a SQLite file's folder. True when there was none."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError, SQLAlchemyError

    try:
        target = make_url(url)
    except ArgumentError as exc:
        raise CoworkEnvError(f"metadata database URL: {exc}") from None
    if target.get_backend_name() == "sqlite":
        path = Path(target.database or "")
        path.parent.mkdir(parents=True, exist_ok=True)
        return not path.exists()  # `airflow db migrate` makes the file
    if target.get_backend_name() != "postgresql":
        raise CoworkEnvError(
            f"metadata database {target.render_as_string()}: only Postgres and SQLite are created here"
        )
    name = target.database
    server = create_engine(target.set(database="postgres"), isolation_level="AUTOCOMMIT", pool_pre_ping=False)
    try:
        with server.connect() as connection:
            if connection.execute(text("SELECT 1 FROM pg_database WHERE datname = :name"), {"name": name}).first():
                return False
            quoted = server.dialect.identifier_preparer.quote(name)
            connection.execute(text(f"CREATE DATABASE {quoted}"))
            return True
    except SQLAlchemyError as exc:
        reason = " ".join(str(getattr(exc, "orig", exc)).split())
        raise CoworkEnvError(
            f"cannot create the metadata database {name!r} at {target.render_as_string()}: {reason}"
        ) from None
    finally:
        server.dispose()
