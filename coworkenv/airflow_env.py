"""The embedded Airflow setup (SQLite, LocalExecutor, this repo's dags/), as environment variables.

One source of truth for the Makefile (`coworkenv airflow-env`), the tests and anyone running Airflow by hand.
No Airflow import here: the library must stay importable without it.
"""

from __future__ import annotations

import os
import secrets
import sysconfig
from pathlib import Path

HF_OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}


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


def embedded_env(root: Path | None = None, home: Path | None = None, port: int | None = None) -> dict[str, str]:
    """The embedded setup's variables. `COWORKENV_AIRFLOW_HOME`, `COWORKENV_AIRFLOW_PORT` and `COWORKENV_DATA_ROOT`, when
    set, move the metadata DB and logs, the UI's port and the data (a second instance beside the first, a test)."""
    root = (root or project_root()).resolve()
    home = (home or Path(os.environ.get("COWORKENV_AIRFLOW_HOME") or root / ".airflow")).resolve()
    port = port or int(os.environ.get("COWORKENV_AIRFLOW_PORT") or 8080)
    data = Path(os.environ.get("COWORKENV_DATA_ROOT") or root / "data").resolve()
    return {
        "PATH": os.pathsep.join([str(scripts_dir()), os.environ.get("PATH", "")]),
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__CORE__DAGS_FOLDER": str(root / "dags"),
        "AIRFLOW__CORE__PLUGINS_FOLDER": str(root / "plugins"),
        "AIRFLOW__CORE__EXECUTOR": "LocalExecutor",
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{home / 'airflow.db'}",
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__CORE__PARALLELISM": "4",
        "AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION": "False",
        "AIRFLOW__API__HOST": "127.0.0.1",
        "AIRFLOW__API__PORT": str(port),
        "AIRFLOW__API__BASE_URL": f"http://127.0.0.1:{port}",
        "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": f"http://127.0.0.1:{port}/execution/",
        "AIRFLOW__API_AUTH__JWT_SECRET": _jwt_secret(home),
        "AIRFLOW__LOGGING__BASE_LOG_FOLDER": str(home / "logs"),
        "COWORKENV_ROOT": str(root),
        "COWORKENV_DATA_ROOT": str(data),
        **HF_OFFLINE,
    }


def shell_exports(env: dict[str, str]) -> str:
    import shlex

    return "\n".join(f"export {key}={shlex.quote(value)}" for key, value in env.items())
