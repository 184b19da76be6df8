"""The CoworkEnv plugin in a real Airflow: loaded from the plugins folder by Airflow's plugins manager, its pages mounted
by the API server's own `create_app` at `/coworkenv`, behind Airflow's sign-in (tokens from the simple auth manager),
listed in the UI's plugin API with its menu entries and DAG-run tab, and cheap to import for every component."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.dags.conftest import ROOT, AirflowHome
from tests.support.pipeline_root import SYNTHESIS

pytestmark = [pytest.mark.airflow, pytest.mark.integration, pytest.mark.xdist_group("airflow")]

PLUGIN = ROOT / "plugins" / "coworkenv_plugin.py"
HEAVY = ("torch", "transformers", "great_expectations", "duckdb", "pyarrow", "pandas", "trl", "datasets")


def test_airflow_loads_the_plugin_from_the_plugins_folder(airflow_home: AirflowHome) -> None:
    result = airflow_home.cli("plugins", "--output", "json")
    assert result.returncode == 0, result.stdout[-3000:]
    listed = json.loads(next(line for line in result.stdout.splitlines() if line.startswith("[")))
    (plugin,) = [p for p in listed if p["name"] == "coworkenv"]
    assert plugin["source"] == "$PLUGINS_FOLDER/coworkenv_plugin.py"
    assert plugin["fastapi_apps"] == [
        {"app": "fastapi.applications.FastAPI", "url_prefix": "/coworkenv", "name": "CoworkEnv pages"}
    ]
    nav = [v for v in plugin["external_views"] if v["destination"] == "nav"]
    assert [(v["name"], v["href"], v["category"]) for v in nav] == [
        ("Releases", "coworkenv/releases", "CoworkEnv"),
        ("Evaluations", "coworkenv/evaluations", "CoworkEnv"),
        ("Runs and gates", "coworkenv/runs", "CoworkEnv"),
    ]
    (tab,) = [v for v in plugin["external_views"] if v["destination"] == "dag_run"]
    assert tab["href"] == "coworkenv/dag-runs/{DAG_ID}/{RUN_ID}"


@pytest.fixture
def api(airflow_home: AirflowHome, pipeline_root, monkeypatch: pytest.MonkeyPatch):
    """The API server's app, built by Airflow's `create_app` (plugins, auth manager and all), over the pipeline's data."""
    from airflow import plugins_manager
    from airflow.api_fastapi.app import create_app
    from fastapi.testclient import TestClient

    monkeypatch.setenv("COWORKENV_DATA_ROOT", str(pipeline_root.root))
    plugins, errors = plugins_manager._get_plugins()
    assert "coworkenv" in [p.name for p in plugins] and not errors
    return TestClient(create_app())


def sign_in(api, home: Path) -> str:
    password = json.loads((home / "simple_auth_manager_passwords.json.generated").read_text())["admin"]
    reply = api.post("/auth/token", json={"username": "admin", "password": password})
    assert reply.status_code in (200, 201), reply.text
    return reply.json()["access_token"]


def test_the_api_server_mounts_the_pages_behind_airflow_sign_in(api, airflow_home: AirflowHome, pipeline_root) -> None:
    token = sign_in(api, airflow_home.home)
    release = pipeline_root.tasks.release_id

    signed_in = api.get("/coworkenv/releases", headers={"Authorization": f"Bearer {token}"})
    assert signed_in.status_code == 200 and release in signed_in.text
    api.cookies.set("_token", token)  # what the UI's login leaves in the browser, and the plugin's iframe sends
    page = api.get(f"/coworkenv/releases/{release}")
    assert page.status_code == 200 and "Rejection reasons" in page.text
    tab = api.get(f"/coworkenv/dag-runs/coworkenv_synthesize/{SYNTHESIS}")
    assert tab.status_code == 200 and release in tab.text
    api.cookies.clear()

    for path in ("/coworkenv/releases", f"/coworkenv/releases/{release}", "/coworkenv/runs", "/coworkenv/evaluations"):
        anonymous = api.get(path, headers={"Accept": "application/json"}, follow_redirects=False)
        assert anonymous.status_code == 401 and release not in anonymous.text, path
        browser = api.get(path, headers={"Accept": "text/html"}, follow_redirects=False)
        assert browser.status_code == 307 and browser.headers["location"].startswith("/auth/login?next="), path
        forged = api.get(path, headers={"Authorization": "Bearer not-a-token"}, follow_redirects=False)
        assert forged.status_code == 403 and release not in forged.text, path
    assert api.post("/coworkenv/releases", headers={"Authorization": f"Bearer {token}"}).status_code == 405


def test_the_ui_lists_the_menu_and_the_dag_run_tab(api, airflow_home: AirflowHome) -> None:
    token = sign_in(api, airflow_home.home)
    plugins = api.get("/api/v2/plugins", headers={"Authorization": f"Bearer {token}"}).json()["plugins"]
    (plugin,) = [p for p in plugins if p["name"] == "coworkenv"]
    routes = {v["url_route"]: v for v in plugin["external_views"]}
    assert {r: v["destination"] for r, v in routes.items()} == {
        "coworkenv-releases": "nav",
        "coworkenv-evaluations": "nav",
        "coworkenv-runs": "nav",
        "coworkenv-dag-run": "dag_run",
    }
    # Each nav entry's page, as the UI's iframe loads it (its href resolved against Airflow's base URL).
    for view in routes.values():
        if view["destination"] == "nav":
            assert api.get("/" + view["href"], headers={"Authorization": f"Bearer {token}"}).status_code == 200, view


def test_importing_the_plugin_loads_no_heavy_library(airflow_home: AirflowHome) -> None:
    """Airflow imports the plugin in the scheduler and the DAG processor too: building the app must stay cheap."""
    code = f"""
import importlib.util, json, sys, time
import airflow.plugins_manager
before = set(sys.modules)
started = time.perf_counter()
spec = importlib.util.spec_from_file_location("coworkenv_plugin", {str(PLUGIN)!r})
spec.loader.exec_module(importlib.util.module_from_spec(spec))
print(json.dumps({{"seconds": time.perf_counter() - started, "modules": sorted(set(sys.modules) - before)}}))
"""
    env = {**os.environ, **airflow_home.env}
    result = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    loaded = {name.split(".")[0] for name in report["modules"]}
    assert not loaded & set(HEAVY), sorted(loaded & set(HEAVY))
    assert report["seconds"] < 5, report["seconds"]  # about 0.2 s on a laptop, on top of Airflow's own imports
