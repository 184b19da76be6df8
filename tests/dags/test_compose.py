"""The scale-out stack (docker-compose.yml + Dockerfile) has the shape docs/architecture.md ("Running") describes.

There is no Docker engine on the development machines, so the file is parsed and its shape checked.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from coworkenv.airflow_env import embedded_env
from tests.support import ROOT  # noqa: E402

COMPOSE_TEXT = (ROOT / "docker-compose.yml").read_text()
COMPOSE = yaml.safe_load(COMPOSE_TEXT)
SERVICES = COMPOSE["services"]
AIRFLOW_SERVICES = sorted(name for name in SERVICES if name.startswith("airflow-"))

# ${NAME}, ${NAME:-default}, ${NAME:?message}; `$$` escapes a literal `$`.
INTERPOLATION = re.compile(r"(?<!\$)\$\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:(?P<op>:?[-?])(?P<arg>[^}]*))?\}")
SECRET_NAME = re.compile(r"PASSWORD|SECRET|FERNET|TOKEN|PRIVATE|(^|_)KEY$", re.IGNORECASE)
URL_USERINFO = re.compile(r"^[a-z][a-z0-9+.-]*://(?P<user>[^:/@]*):(?P<password>[^@]*)@", re.IGNORECASE)


def env_of(service: str) -> dict[str, str]:
    env = SERVICES[service].get("environment", {})
    assert isinstance(env, dict), f"{service}: environment should be a mapping"
    return {key: str(value) for key, value in env.items()}


def command_of(service: str) -> list[str]:
    command = SERVICES[service]["command"]
    return command if isinstance(command, list) else command.split()


def strings(node, path: str = ""):
    """Every (path, string) in the parsed file, keys excluded."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield from strings(value, f"{path}.{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from strings(value, f"{path}[{index}]")
    elif isinstance(node, str):
        yield path, node


def is_required_variable(value: str) -> bool:
    """The whole value is one `${NAME:?...}` / `${NAME?...}` interpolation: no default, no literal."""
    match = INTERPOLATION.fullmatch(value)
    return bool(match) and (match["op"] or "").endswith("?")


def test_services_present():
    expected = {
        "postgres",
        "redis",
        "airflow-init",
        "airflow-apiserver",
        "airflow-scheduler",
        "airflow-dag-processor",
        "airflow-triggerer",
        "airflow-worker",
        "airflow-worker-gpu",
    }
    assert expected <= set(SERVICES)


@pytest.mark.parametrize(
    "service, words",
    [
        ("airflow-apiserver", ["airflow", "api-server"]),
        ("airflow-scheduler", ["airflow", "scheduler"]),
        ("airflow-dag-processor", ["airflow", "dag-processor"]),
        ("airflow-triggerer", ["airflow", "triggerer"]),
        ("airflow-worker", ["airflow", "celery", "worker"]),
        ("airflow-worker-gpu", ["airflow", "celery", "worker"]),
    ],
)
def test_airflow_component_commands(service: str, words: list[str]):
    assert command_of(service)[: len(words)] == words


def test_init_migrates_and_creates_the_gpu_pool():
    script = " ".join(command_of("airflow-init"))
    assert "airflow db migrate" in script
    assert "airflow pools set gpu" in script


@pytest.mark.parametrize("service", AIRFLOW_SERVICES)
def test_airflow_services_share_image_and_settings(service: str):
    spec = SERVICES[service]
    assert spec["image"] == SERVICES["airflow-scheduler"]["image"]
    assert spec.get("build") in (".", {"context": "."})
    env = env_of(service)
    assert env["AIRFLOW__CORE__EXECUTOR"] == "CeleryExecutor"
    assert env["AIRFLOW__CORE__DAGS_FOLDER"] == env["COWORKENV_ROOT"] + "/dags"
    assert env["AIRFLOW__CORE__PLUGINS_FOLDER"] == env["COWORKENV_ROOT"] + "/plugins"
    assert env["AIRFLOW__CORE__LOAD_EXAMPLES"].lower() == "false"
    assert env["AIRFLOW__CORE__EXECUTION_API_SERVER_URL"].startswith("http://airflow-apiserver:8080/")
    for key in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE"):
        assert env[key] == "1"


@pytest.mark.parametrize("service", AIRFLOW_SERVICES)
def test_metadata_db_is_postgres_and_broker_is_redis(service: str):
    env = env_of(service)
    conn = env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"]
    assert conn.startswith("postgresql")
    assert "@postgres:5432/" in conn
    broker = env["AIRFLOW__CELERY__BROKER_URL"]
    assert broker.startswith("redis://")
    assert "@redis:6379/" in broker
    assert env["AIRFLOW__CELERY__RESULT_BACKEND"].startswith("db+postgresql")


def test_compose_sets_what_the_embedded_env_sets(tmp_path: Path):
    """Same knobs as `coworkenv airflow-env`, except the ones the scale-out shape replaces on purpose."""
    replaced = {
        "AIRFLOW_HOME",  # the image's
        "AIRFLOW__CORE__EXECUTOR",  # Celery, not Local
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN",  # Postgres, not SQLite
        "AIRFLOW__API__HOST",  # the api-server listens on the container network
        "AIRFLOW__LOGGING__BASE_LOG_FOLDER",  # AIRFLOW_HOME/logs, a shared volume
        "PATH",  # the image's, which has airflow on it
        "AIRFLOW__API__PORT",  # the image's default, 8080
        "AIRFLOW__API__BASE_URL",  # the published port's
    }
    wanted = set(embedded_env(root=ROOT, home=tmp_path)) - replaced
    for service in AIRFLOW_SERVICES:
        assert wanted <= set(env_of(service)), (service, sorted(wanted - set(env_of(service))))


def test_dependencies_wait_for_health_and_migration():
    for service in AIRFLOW_SERVICES:
        depends = SERVICES[service]["depends_on"]
        assert depends["postgres"]["condition"] == "service_healthy"
        assert depends["redis"]["condition"] == "service_healthy"
        if service != "airflow-init":
            assert depends["airflow-init"]["condition"] == "service_completed_successfully"
    for service in ("postgres", "redis", "airflow-apiserver", "airflow-scheduler"):
        assert SERVICES[service]["healthcheck"]["test"], service


def test_cpu_workers_serve_the_default_queue():
    command = command_of("airflow-worker")
    assert command[command.index("--queues") + 1] == "default"
    assert env_of("airflow-worker")["AIRFLOW__OPERATORS__DEFAULT_QUEUE"] == "default"
    assert "resources" not in SERVICES["airflow-worker"].get("deploy", {})


def test_gpu_worker_serves_the_gpu_queue_with_a_reserved_gpu():
    command = command_of("airflow-worker-gpu")
    assert command[command.index("--queues") + 1] == "gpu"
    devices = SERVICES["airflow-worker-gpu"]["deploy"]["resources"]["reservations"]["devices"]
    assert any("gpu" in device["capabilities"] and device.get("driver") == "nvidia" for device in devices)


def test_shared_data_volume():
    assert "coworkenv-data" in COMPOSE["volumes"]
    for service in AIRFLOW_SERVICES:
        env = env_of(service)
        mounts = SERVICES[service]["volumes"]
        assert "coworkenv-data:/data" in mounts, service
        assert env["COWORKENV_DATA_ROOT"] in ("/data", "${COWORKENV_DATA_ROOT:-/data}"), service


def test_no_literal_secrets():
    for service in SERVICES:
        for key, value in env_of(service).items():
            if SECRET_NAME.search(key):
                assert is_required_variable(value), f"{service}: {key} must be ${{VAR:?...}}, not {value!r}"
    for path, value in strings(COMPOSE):
        url = URL_USERINFO.match(value)
        if url:
            assert is_required_variable(url["password"]), f"{path}: password in {value!r} must be ${{VAR:?...}}"
    command = command_of("redis")
    assert is_required_variable(command[command.index("--requirepass") + 1])


def test_required_variables_are_documented_in_the_header():
    header = COMPOSE_TEXT.split("\nx-", 1)[0]
    required = {m["name"] for m in INTERPOLATION.finditer(COMPOSE_TEXT) if (m["op"] or "").endswith("?")}
    assert required, "secrets should come from required variables"
    assert {"POSTGRES_PASSWORD", "REDIS_PASSWORD", "AIRFLOW_FERNET_KEY", "AIRFLOW_JWT_SECRET"} <= required
    for name in required:
        assert re.search(rf"^#\s+{name}=", header, re.MULTILINE), f"{name} is not explained in the header"


def test_env_file_is_optional_and_named_dot_env():
    for service in AIRFLOW_SERVICES:
        (entry,) = SERVICES[service]["env_file"]
        assert entry == {"path": ".env", "required": False}


def test_dockerfile_installs_the_lock_then_the_project_without_deps():
    dockerfile = (ROOT / "Dockerfile").read_text()
    lines = [line.strip() for line in dockerfile.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    assert lines[0].startswith("FROM python:3.11")
    lock = next(i for i, line in enumerate(lines) if re.search(r"pip install .*-r requirements\.lock", line))
    editable = next(i for i, line in enumerate(lines) if re.search(r"pip install .*--no-deps.* -e \.", line))
    assert lock < editable
    for folder in ("coworkenv", "dags", "plugins"):
        assert any(re.fullmatch(rf"COPY {folder} \./{folder}", line) for line in lines), folder
    assert not re.search(r"(PASSWORD|SECRET|FERNET)\w*=", dockerfile)
