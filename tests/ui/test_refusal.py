"""The refusal middleware (`coworkenv.ui.refusal`) as a real ASGI app in front of a small downstream app: bad
settings answered 400 in the form's words before the downstream sees anything; every other request reaches it with
its body byte for byte. Airflow's own auth decides who is checked (tests/dags/test_trigger_refusal.py runs it inside
Airflow's API server)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from coworkenv.pipeline.all_jobs import job_configs
from coworkenv.pipeline.config import SynthesisConfig
from coworkenv.ui.refusal import MAX_BODY_BYTES, RefuseBadSettings

ROOT = Path(__file__).resolve().parents[2]

TRIGGER = "/api/v2/dags/coworkenv_synthesize/dagRuns"


def downstream_app(seen: list[bytes]) -> Starlette:
    async def echo(request: Request) -> JSONResponse:
        body = await request.body()
        seen.append(body)
        return JSONResponse({"reached": True, "bytes": len(body)}, status_code=200)

    return Starlette(routes=[Route("/{path:path}", echo, methods=["GET", "POST"])])


async def allow(scope, dag_id) -> bool:
    return True


async def deny(scope, dag_id) -> bool:
    return False


async def broken(scope, dag_id) -> bool:
    raise RuntimeError("an auth manager of another shape")


@pytest.fixture
def seen() -> list[bytes]:
    return []


def client(seen: list[bytes], authorize=allow, root_path: str = "") -> TestClient:
    return TestClient(RefuseBadSettings(downstream_app(seen), authorize=authorize), root_path=root_path)


def form_conf(**changes) -> dict:
    """What Airflow's trigger form posts: every Param with its value, null for a field left empty."""
    return {**{name: field.default for name, field in SynthesisConfig.model_fields.items()}, **changes}


@pytest.mark.parametrize(
    ("conf", "detail"),
    [
        (
            {"difficulty_min": 5, "difficulty_max": 1},
            "Lowest difficulty (difficulty_min) 5 is above Highest difficulty (difficulty_max) 1",
        ),
        (
            {"generator": "llm"},
            "Generator (generator) 'llm' needs an LLM endpoint: an LLM connection (llm_conn_id), or an LLM base URL "
            "(llm_base_url) and an LLM model (llm_model)",
        ),
        ({"profile": "no/such/profile.json"}, "Capability profile (profile): no/such/profile.json: no such file"),
        ({"nn": 20}, "'nn' is not a setting of this run (did you mean Tasks (n)?)"),
        ({"n": -1}, "Tasks (n): Input should be greater than or equal to 1"),
        (
            form_conf(difficulty_min=4, difficulty_max=2),
            "Lowest difficulty (difficulty_min) 4 is above Highest difficulty (difficulty_max) 2",
        ),
    ],
)
def test_bad_settings_are_refused_before_the_run_exists(seen, conf, detail):
    reply = client(seen).post(TRIGGER, json={"logical_date": None, "conf": conf})
    assert (reply.status_code, reply.json()) == (400, {"detail": detail})
    assert seen == []


@pytest.mark.parametrize(
    "body",
    [
        {
            "logical_date": None,
            "conf": form_conf(families=["mail_triage", "sheet_join"], capabilities=None, n=12),
        },  # the form, filled in
        {"logical_date": None, "conf": {"n": 16, "difficulty_min": 2, "difficulty_max": 4}},  # REST with a few keys
        {"logical_date": None},  # no conf: the defaults
        {"logical_date": None, "conf": None},
    ],
)
def test_good_settings_reach_airflow_byte_for_byte(seen, body):
    raw = json.dumps(body, indent=1).encode()
    reply = client(seen).post(TRIGGER, content=raw, headers={"content-type": "application/json"})
    assert reply.status_code == 200 and seen == [raw]


@pytest.mark.parametrize(
    ("method", "path", "raw"),
    [
        (
            "POST",
            "/api/v2/dags/someone_elses_dag/dagRuns",
            b'{"conf": {"difficulty_min": 5, "difficulty_max": 1}}',
        ),  # not ours
        ("POST", TRIGGER, b"{not json"),  # Airflow answers 422 itself
        ("POST", TRIGGER, b'{"conf": [1, 2]}'),
        ("POST", TRIGGER, b"[]"),
        ("POST", TRIGGER + "/run-1/clear", b'{"conf": {"nn": 1}}'),
        ("POST", "/api/v2/dags/coworkenv_synthesize/dagRuns/list", b'{"conf": {"nn": 1}}'),
        ("GET", TRIGGER, b""),
    ],
)
def test_anything_else_passes_unchanged(seen, method, path, raw):
    reply = client(seen).request(method, path, content=raw, headers={"content-type": "application/json"})
    assert reply.status_code == 200 and seen == [raw]


@pytest.mark.parametrize("authorize", [deny, broken], ids=["not-allowed", "auth-unknown"])
def test_only_a_user_airflow_lets_trigger_is_checked(seen, authorize):
    """Anyone else gets Airflow's own 401/403: settings (a file path on the server) are never judged for them."""
    raw = json.dumps({"conf": {"profile": "/etc/some/file.json"}}).encode()
    reply = client(seen, authorize=authorize).post(TRIGGER, content=raw)
    assert reply.status_code == 200 and seen == [raw]


@pytest.fixture
def published_bench(tmp_path, monkeypatch) -> str:
    """A data root with a benchmark release, as the runs will read it (`COWORKENV_DATA_ROOT`): its release id."""
    from coworkenv.eval.suite import build_bench

    monkeypatch.setenv("COWORKENV_DATA_ROOT", str(tmp_path / "data"))
    return build_bench(n=2, data_root=tmp_path / "data").release_id


def test_backfills_are_checked_too(seen, published_bench):
    body = {
        "dag_id": "coworkenv_nightly",
        "from_date": "2026-01-01T00:00:00Z",
        "to_date": "2026-01-03T00:00:00Z",
        "dag_run_conf": {"suite": "held_out.jsonl"},
    }
    reply = client(seen).post("/api/v2/backfills", json=body)
    assert reply.status_code == 400 and reply.json()["detail"].startswith("Held-out suite (suite): held_out.jsonl")
    body["dag_run_conf"] = {"budget": 10}
    assert client(seen).post("/api/v2/backfills", json=body).status_code == 200 and len(seen) == 1


@pytest.mark.parametrize("dag_id", ["coworkenv_evaluate", "coworkenv_nightly"])
def test_a_suite_that_is_not_published_is_refused(seen, tmp_path, monkeypatch, dag_id):
    """The suite is looked up under the data root the run will read, the default `bench` too: no run is made to
    fail in its first stage."""
    from coworkenv.eval.suite import build_bench

    monkeypatch.setenv("COWORKENV_DATA_ROOT", str(tmp_path / "data"))
    route = f"/api/v2/dags/{dag_id}/dagRuns"
    reply = client(seen).post(route, json={"conf": {}})
    assert reply.status_code == 400 and "no benchmark release under" in reply.json()["detail"]
    assert reply.json()["detail"].endswith("build one with `coworkenv eval bench`")
    reply = client(seen).post(route, json={"conf": {"suite": "r-no-such-release"}})
    assert reply.status_code == 400 and "no complete release 'r-no-such-release'" in reply.json()["detail"]
    published = build_bench(n=2, data_root=tmp_path / "data").release_id
    for conf in ({}, {"suite": published}):
        assert client(seen).post(route, json={"conf": conf}).status_code == 200
    assert len(seen) == 2


@pytest.mark.parametrize(
    ("conf", "detail"),
    [
        (
            {"tasks_pth": "examples/tasks"},
            "'tasks_pth' is not a setting of this run (did you mean Tasks (tasks_path)?)",
        ),
        ({"tasks_path": "no/such/tasks"}, "Tasks (tasks_path): no/such/tasks: no such task file or folder"),
        ({"tasks_path": "README.md"}, "Tasks (tasks_path): README.md: a task file is .json or .jsonl"),
        ({"shard_size": 0}, "Shard size (shard_size): Input should be greater than or equal to 1"),
    ],
)
def test_a_core_check_is_checked_like_the_jobs(seen, monkeypatch, conf, detail):
    monkeypatch.setenv("COWORKENV_ROOT", str(ROOT))
    route = "/api/v2/dags/coworkenv_core_check/dagRuns"
    reply = client(seen).post(route, json={"conf": conf})
    assert reply.status_code == 400 and reply.json()["detail"] == detail and seen == []
    assert client(seen).post(route, json={"conf": {"tasks_path": "examples/tasks"}}).status_code == 200


def test_under_a_root_path(seen):
    """An API server under a path prefix (`[api] base_url` with a path): the route is matched below it."""
    reply = client(seen, root_path="/airflow").post("/airflow" + TRIGGER, json={"conf": {"nn": 1}})
    assert reply.status_code == 400 and seen == []


def test_every_job_dag_has_its_model():
    assert set(job_configs()) == {p.stem for p in (ROOT / "dags").glob("coworkenv_*.py")}
    for dag_id in job_configs():
        reply = client([]).post(f"/api/v2/dags/{dag_id}/dagRuns", json={"conf": {"no_such_setting": 1}})
        assert (
            reply.status_code == 400 and "'no_such_setting' is not a setting of this run" in reply.json()["detail"]
        ), dag_id


def send_in_chunks(chunks: list[bytes], scope_path: str = TRIGGER) -> tuple[list[dict], list[bytes]]:
    """Drive the middleware by hand: a body in several `http.request` messages, as a real server delivers it."""
    seen: list[bytes] = []
    sent: list[dict] = []
    messages = [{"type": "http.request", "body": c, "more_body": i < len(chunks) - 1} for i, c in enumerate(chunks)]
    scope = {
        "type": "http",
        "method": "POST",
        "path": scope_path,
        "root_path": "",
        "headers": [(b"content-type", b"application/json")],
        "query_string": b"",
        "http_version": "1.1",
        "scheme": "http",
        "server": ("test", 80),
        "client": ("test", 1),
    }

    async def receive() -> dict:
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    async def send(message: dict) -> None:
        sent.append(message)

    asyncio.run(RefuseBadSettings(downstream_app(seen), authorize=allow)(scope, receive, send))
    return sent, seen


def test_a_body_in_chunks_is_read_whole_and_replayed():
    raw = json.dumps({"conf": form_conf(n=7)}).encode()
    sent, seen = send_in_chunks([raw[:10], raw[10:50], raw[50:]])
    assert sent[0]["status"] == 200 and seen == [raw]
    bad = json.dumps({"conf": {"difficulty_min": 3, "difficulty_max": 2}}).encode()
    sent, seen = send_in_chunks([bad[:5], bad[5:]])
    assert sent[0]["status"] == 400 and seen == []


def test_a_body_over_the_limit_goes_on_unread():
    filler = b" " * (MAX_BODY_BYTES + 10)
    raw = b'{"conf": {"nn": 1}' + filler + b"}"
    sent, seen = send_in_chunks(
        [raw[: MAX_BODY_BYTES // 2], raw[MAX_BODY_BYTES // 2 : MAX_BODY_BYTES + 5], raw[MAX_BODY_BYTES + 5 :]]
    )
    assert sent[0]["status"] == 200 and seen == [raw]


def test_the_module_the_plugin_imports_is_light():
    """Airflow imports plugins in the scheduler and the DAG processor too: the config models and Airflow's auth load
    on the first trigger, in the API server only."""
    import subprocess
    import sys

    code = (
        "import sys, coworkenv.ui.refusal\n"
        "heavy = [m for m in sys.modules if m.split('.')[0] in ('pydantic', 'airflow', 'fastapi') or m.startswith('coworkenv.pipeline')]\n"
        "sys.exit(f'imported: {heavy}' if heavy else 0)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr or result.stdout
