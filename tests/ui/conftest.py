"""The pages' app over the pipeline-made data root, mounted as Airflow mounts it (under a base path and the plugin's
prefix), behind a stand-in for Airflow's sign-in that accepts one bearer token (tests/dags/test_plugin.py signs in to
a real Airflow)."""

from __future__ import annotations

import pytest
from fastapi import FastAPI, HTTPException, Request
from fastapi.testclient import TestClient

BASE = "/airflow/coworkenv"
TOKEN = "Bearer a-signed-in-user"


async def signed_in(request: Request) -> str:
    if request.headers.get("authorization") != TOKEN:
        raise HTTPException(status_code=401, detail="Not authenticated")
    return "user"


def mounted(data_root) -> FastAPI:
    from coworkenv.ui.app import create_app

    outer = FastAPI(root_path="/airflow")
    outer.mount("/coworkenv", create_app(signed_in, data_root))
    return outer


@pytest.fixture(scope="module")
def app(pipeline_root) -> FastAPI:
    return mounted(pipeline_root.root)


@pytest.fixture
def client(app: FastAPI) -> TestClient:
    return TestClient(app, headers={"authorization": TOKEN})


@pytest.fixture
def anonymous(app: FastAPI) -> TestClient:
    return TestClient(app)
