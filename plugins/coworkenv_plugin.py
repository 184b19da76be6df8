"""The CoworkEnv Airflow plugin: the pages of `coworkenv.ui` mounted in the API server at `/coworkenv`, and entries
for them in the UI (a "CoworkEnv" menu, and a tab on every DAG run). Read-only; behind Airflow's sign-in.

Airflow imports this module in every component (API server, scheduler, DAG processor), so it only builds the app:
FastAPI and Jinja2 load here, the readers on the first request (plugins/README.md).
"""

from __future__ import annotations

from airflow.plugins_manager import AirflowPlugin

from coworkenv.ui.app import create_app
from coworkenv.ui.auth import airflow_user

URL_PREFIX = "/coworkenv"
CATEGORY = "CoworkEnv"
# Relative hrefs: the UI resolves them against Airflow's base URL, so the pages work under a base path too.
PAGES = {"Releases": "releases", "Evaluations": "evaluations", "Runs and gates": "runs"}


class CoworkEnvPlugin(AirflowPlugin):
    name = "coworkenv"
    fastapi_apps = [{"app": create_app(airflow_user), "url_prefix": URL_PREFIX, "name": "CoworkEnv pages"}]
    external_views = [
        *({"name": title, "href": f"coworkenv/{page}", "url_route": f"coworkenv-{page}", "category": CATEGORY, "destination": "nav"}
          for title, page in PAGES.items()),
        {"name": "CoworkEnv", "href": "coworkenv/dag-runs/{DAG_ID}/{RUN_ID}", "url_route": "coworkenv-dag-run", "destination": "dag_run"},
    ]  # fmt: skip
