"""`coworkenv airflow-env`: the embedded Airflow's variables, usable from a shell that has never seen the venv."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from coworkenv.airflow_env import embedded_env, scripts_dir
from tests.dags.standalone import user_path
from tests.support import ROOT

COWORKENV = Path(sys.executable).parent / "coworkenv"


def shell(script: str, **env: str) -> str:
    """`script` in bash after `eval "$(coworkenv airflow-env)"`, with a PATH that lacks the venv."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW", "COWORKENV"))}
    result = subprocess.run(
        ["bash", "-c", f'eval "$({COWORKENV} airflow-env)" && {script}'],
        env={**base, "PATH": user_path(), **env}, cwd=ROOT, capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    return result.stdout.strip()


def test_the_venv_scripts_lead_path_so_airflow_standalone_can_start_its_children() -> None:
    assert shell("command -v airflow") == str(scripts_dir() / "airflow")
    assert embedded_env(root=ROOT)["PATH"].split(os.pathsep)[0] == str(scripts_dir())


def test_defaults_are_the_checkout_home_port_8080_and_data(tmp_path: Path) -> None:
    out = shell('echo "$AIRFLOW_HOME|$AIRFLOW__API__PORT|$AIRFLOW__CORE__EXECUTION_API_SERVER_URL|$COWORKENV_DATA_ROOT"')
    assert out.split("|") == [str(ROOT / ".airflow"), "8080", "http://127.0.0.1:8080/execution/", str(ROOT / "data")]


def test_a_second_instance_moves_home_port_and_data_together(tmp_path: Path) -> None:
    out = shell(
        'echo "$AIRFLOW_HOME|$AIRFLOW__DATABASE__SQL_ALCHEMY_CONN|$AIRFLOW__API__PORT|$AIRFLOW__API__BASE_URL|$COWORKENV_DATA_ROOT"',
        COWORKENV_AIRFLOW_HOME=str(tmp_path / "af"), COWORKENV_AIRFLOW_PORT="8123", COWORKENV_DATA_ROOT=str(tmp_path / "data"),
    )  # fmt: skip
    home, db, port, base, data = out.split("|")
    assert (home, db, port, base, data) == (
        str(tmp_path / "af"), f"sqlite:///{tmp_path / 'af' / 'airflow.db'}", "8123", "http://127.0.0.1:8123", str(tmp_path / "data"),
    )  # fmt: skip
    assert (tmp_path / "af" / "jwt_secret").stat().st_mode & 0o077 == 0  # the secret is private to its owner
