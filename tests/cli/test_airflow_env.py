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


def shell(script: str, profile: str | None = None, **env: str) -> str:
    """`script` in bash after `eval "$(coworkenv airflow-env [--profile P])"`, with a PATH that lacks the venv."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW", "COWORKENV"))}
    option = f" --profile {profile}" if profile else ""
    result = subprocess.run(
        ["bash", "-c", f'eval "$({COWORKENV} airflow-env{option})" && {script}'],
        env={**base, "PATH": user_path(), **env},
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return result.stdout.strip()


def test_the_venv_scripts_lead_path_so_airflow_standalone_can_start_its_children() -> None:
    assert shell("command -v airflow") == str(scripts_dir() / "airflow")
    assert embedded_env(root=ROOT)["PATH"].split(os.pathsep)[0] == str(scripts_dir())


def test_defaults_are_the_checkout_home_port_8080_and_data(tmp_path: Path) -> None:
    out = shell(
        'echo "$AIRFLOW_HOME|$AIRFLOW__API__PORT|$AIRFLOW__CORE__EXECUTION_API_SERVER_URL|$COWORKENV_DATA_ROOT"'
    )
    assert out.split("|") == [str(ROOT / ".airflow"), "8080", "http://127.0.0.1:8080/execution/", str(ROOT / "data")]


def test_a_second_instance_moves_home_port_and_data_together(tmp_path: Path) -> None:
    out = shell(
        'echo "$AIRFLOW_HOME|$AIRFLOW__DATABASE__SQL_ALCHEMY_CONN|$AIRFLOW__API__PORT|$AIRFLOW__API__BASE_URL|$COWORKENV_DATA_ROOT"',
        COWORKENV_AIRFLOW_HOME=str(tmp_path / "af"),
        COWORKENV_AIRFLOW_PORT="8123",
        COWORKENV_DATA_ROOT=str(tmp_path / "data"),
    )
    home, db, port, base, data = out.split("|")
    assert (home, db, port, base, data) == (
        str(tmp_path / "af"),
        f"sqlite:///{tmp_path / 'af' / 'airflow.db'}",
        "8123",
        "http://127.0.0.1:8123",
        str(tmp_path / "data"),
    )
    assert (tmp_path / "af" / "jwt_secret").stat().st_mode & 0o077 == 0  # the secret is private to its owner


def test_the_cluster_profile_is_postgres_celery_redis_and_the_gpu_queue_and_pool() -> None:
    out = shell(
        'echo "$AIRFLOW__CORE__EXECUTOR|$AIRFLOW__DATABASE__SQL_ALCHEMY_CONN|$AIRFLOW__CELERY__BROKER_URL|'
        '$AIRFLOW__CELERY__RESULT_BACKEND|$AIRFLOW__OPERATORS__DEFAULT_QUEUE|$COWORKENV_GPU_POOL_SLOTS"',
        profile="cluster",
    )
    assert out.split("|") == [
        "CeleryExecutor",
        "postgresql+psycopg2://postgres@127.0.0.1:5432/airflow",
        "redis://127.0.0.1:6379/0",
        "db+postgresql+psycopg2://postgres@127.0.0.1:5432/airflow",
        "default",
        "1",
    ]


def test_the_profile_setting_selects_the_profile_and_variables_move_the_services() -> None:
    out = shell(
        'echo "$AIRFLOW__CORE__EXECUTOR|$AIRFLOW__DATABASE__SQL_ALCHEMY_CONN|$AIRFLOW__CELERY__RESULT_BACKEND|'
        '$AIRFLOW__CELERY__BROKER_URL|$COWORKENV_GPU_POOL_SLOTS|$AIRFLOW__CORE__PARALLELISM"',
        COWORKENV_AIRFLOW_PROFILE="cluster",
        COWORKENV_DATABASE_URL="postgresql://af@db.internal/af",
        COWORKENV_BROKER_URL="redis://queue.internal:6379/3",
        COWORKENV_GPU_POOL_SLOTS="4",
        AIRFLOW_PARALLELISM="",
    )
    # an empty variable counts as unset (AIRFLOW_PARALLELISM), as in docker compose
    assert out.split("|") == [
        "CeleryExecutor",
        "postgresql://af@db.internal/af",
        "db+postgresql://af@db.internal/af",
        "redis://queue.internal:6379/3",
        "4",
        "32",
    ]
    assert (
        shell("echo $AIRFLOW__CORE__EXECUTOR", COWORKENV_AIRFLOW_PROFILE="cluster", profile="embedded")
        == "LocalExecutor"
    )


def test_an_unknown_profile_is_one_line_naming_the_profiles() -> None:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW", "COWORKENV"))}
    result = subprocess.run(
        [str(COWORKENV), "airflow-env", "--profile", "k8s"], env=base, capture_output=True, text=True, timeout=60
    )
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == "error: Airflow profile 'k8s': unknown; the profiles are embedded, cluster\n"


def test_several_workers_on_one_machine_are_told_apart_by_their_name(monkeypatch) -> None:
    import socket

    from coworkenv.airflow_env import PROFILES, worker_hostname

    assert PROFILES["cluster"]["AIRFLOW__CORE__HOSTNAME_CALLABLE"] == "coworkenv.airflow_env.worker_hostname"
    monkeypatch.delenv("COWORKENV_WORKER_NAME", raising=False)
    assert worker_hostname() == socket.getfqdn()
    monkeypatch.setenv("COWORKENV_WORKER_NAME", "gpu-1")
    assert worker_hostname() == "gpu-1"


def test_an_object_store_data_root_is_kept_as_a_url() -> None:
    assert shell("echo $COWORKENV_DATA_ROOT", COWORKENV_DATA_ROOT="s3://bucket/coworkenv") == "s3://bucket/coworkenv"


def test_the_jwt_secret_is_set_from_its_file_and_never_printed(tmp_path: Path) -> None:
    home = tmp_path / "home"
    base = {k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW", "COWORKENV"))}
    for profile in ("embedded", "cluster"):
        env = {**base, "COWORKENV_AIRFLOW_HOME": str(home)}
        printed = subprocess.run(
            [str(COWORKENV), "airflow-env", "--profile", profile], env=env, capture_output=True, text=True, check=True
        ).stdout
        secret = (home / "jwt_secret").read_text().strip()
        assert len(secret) >= 64 and secret not in printed
        assert shell('echo "$AIRFLOW__API_AUTH__JWT_SECRET"', profile, COWORKENV_AIRFLOW_HOME=str(home)) == secret


def test_each_profile_has_its_own_home_unless_one_is_given(tmp_path: Path) -> None:
    assert shell('echo "$AIRFLOW_HOME"') == str(ROOT / ".airflow")
    assert shell('echo "$AIRFLOW_HOME"', profile="cluster") == str(ROOT / ".airflow-cluster")
    assert shell('echo "$AIRFLOW_HOME"', profile="cluster", COWORKENV_AIRFLOW_HOME=str(tmp_path)) == str(tmp_path)


def init(home: Path, *options: str, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW", "COWORKENV"))}
    return subprocess.run(
        [str(COWORKENV), "airflow-init", *options],
        env={**base, "PATH": user_path(), "COWORKENV_AIRFLOW_HOME": str(home), **env},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_init_makes_the_embedded_database_migrates_it_and_sizes_the_pool_and_may_run_again(tmp_path: Path) -> None:
    home = tmp_path / "a" / "home"
    first = init(home)
    assert first.returncode == 0, first.stderr[-2000:]
    assert "metadata database: created" in first.stderr and (home / "airflow.db").is_file()
    assert first.stderr.rstrip().endswith(f"Airflow (LocalExecutor) is ready: home {home}")
    again = init(home)
    assert again.returncode == 0 and "metadata database: already there" in again.stderr
    pools = shell("airflow pools list", COWORKENV_AIRFLOW_HOME=str(home))
    assert "gpu" in pools


def test_init_of_a_database_it_cannot_reach_is_one_line(tmp_path: Path) -> None:
    result = init(
        tmp_path, "--profile", "cluster", COWORKENV_DATABASE_URL="postgresql+psycopg2://af:hunter2@127.0.0.1:1/af"
    )
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith("error: cannot create the metadata database 'af' at postgresql+psycopg2://af:***@")
    assert "hunter2" not in result.stderr
