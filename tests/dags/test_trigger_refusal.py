"""Airflow's real API server app (`create_app`, the plugin loaded from plugins/ as `airflow api-server` loads it) with
its real auth: a trigger of a CoworkEnv DAG with bad settings is answered 400 in the form's words and no run is
made; good settings make the run with the conf as sent; a user Airflow does not let trigger gets Airflow's own answer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.dags.conftest import AirflowHome

pytestmark = [pytest.mark.airflow, pytest.mark.xdist_group("airflow")]

TRIGGER = "/api/v2/dags/coworkenv_synthesize/dagRuns"


@pytest.fixture
def api(airflow_home: AirflowHome, monkeypatch: pytest.MonkeyPatch):
    """A TestClient on Airflow's API app, the DAGs serialized into its database; (client, {user: bearer token})."""
    from fastapi.testclient import TestClient

    monkeypatch.setenv("AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS", "admin:admin,watcher:viewer")
    result = airflow_home.cli("dags", "reserialize")
    assert result.returncode == 0, result.stdout[-3000:]
    from airflow.api_fastapi.app import create_app, purge_cached_app

    purge_cached_app()
    with TestClient(create_app()) as client:
        passwords = json.loads((Path(airflow_home.home) / "simple_auth_manager_passwords.json.generated").read_text())
        tokens = {}
        for user in ("admin", "watcher"):
            reply = client.post("/auth/token", json={"username": user, "password": passwords[user]})
            assert reply.status_code in (200, 201), reply.text
            tokens[user] = reply.json()["access_token"]
        yield client, tokens
    purge_cached_app()


def runs(client, token: str) -> list[dict]:
    reply = client.get(TRIGGER, headers={"Authorization": f"Bearer {token}"})
    assert reply.status_code == 200, reply.text
    return reply.json()["dag_runs"]


def test_the_api_server_refuses_bad_settings_and_makes_good_runs(api):
    from coworkenv.pipeline.config import SynthesisConfig

    client, tokens = api
    admin = {"Authorization": f"Bearer {tokens['admin']}"}
    before = len(runs(client, tokens["admin"]))
    cases = [
        (
            {"difficulty_min": 5, "difficulty_max": 1},
            "Lowest difficulty (difficulty_min) 5 is above Highest difficulty (difficulty_max) 1",
        ),
        ({"n": -1}, "Tasks (n): Input should be greater than or equal to 1"),
        ({"nn": 20}, "'nn' is not a setting of this run (did you mean Tasks (n)?)"),
        ({"profile": "no/such/profile.json"}, "Capability profile (profile): no/such/profile.json: no such file"),
    ]
    for conf, detail in cases:
        reply = client.post(TRIGGER, json={"logical_date": None, "conf": conf}, headers=admin)
        assert (reply.status_code, reply.json()) == (400, {"detail": detail}), conf
    # the UI's way: its session cookie, not a bearer header
    client.cookies.set("_token", tokens["admin"])
    reply = client.post(
        TRIGGER, json={"logical_date": None, "conf": cases[0][0]}, headers={"Referer": "http://localhost/dags"}
    )
    client.cookies.clear()
    assert (reply.status_code, reply.json()) == (400, {"detail": cases[0][1]})
    assert len(runs(client, tokens["admin"])) == before  # no run was made

    # what the trigger form posts: every Param, null where a field is left empty, pick-lists as lists
    form = {
        **{name: field.default for name, field in SynthesisConfig.model_fields.items()},
        "n": 12,
        "families": ["mail_triage"],
    }
    reply = client.post(TRIGGER, json={"logical_date": None, "conf": form, "note": "from the form"}, headers=admin)
    assert reply.status_code == 200, reply.text
    assert reply.json()["conf"] == form and len(runs(client, tokens["admin"])) == before + 1


def test_a_user_who_may_not_trigger_gets_airflows_answer_not_a_verdict_on_settings(api):
    from airflow import plugins_manager

    from coworkenv.ui.refusal import RefuseBadSettings

    _, middlewares = plugins_manager.get_fastapi_plugins()
    assert [
        m for m in middlewares if m["middleware"] is RefuseBadSettings
    ]  # the plugin is loaded, so the middleware is in place
    client, tokens = api
    bad = {"logical_date": None, "conf": {"profile": "some/profile.json"}}
    assert client.post(TRIGGER, json=bad).status_code == 401  # no credentials
    reply = client.post(TRIGGER, json=bad, headers={"Authorization": f"Bearer {tokens['watcher']}"})
    assert reply.status_code == 403 and "profile" not in reply.text
    assert client.post(TRIGGER, json=bad, headers={"Authorization": "Bearer not-a-token"}).status_code in (401, 403)
