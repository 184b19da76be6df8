"""The CoworkEnv Airflow plugin (plugins/README.md): in the API server, the read-only pages of `coworkenv.ui` mounted
at `/coworkenv` with entries for them in the UI (a "CoworkEnv" menu, a tab on every DAG run), behind Airflow's
sign-in; and a root middleware that refuses a trigger with bad settings before its run exists.

Airflow imports this module in every component (API server, scheduler, DAG processor), so it stays thin: FastAPI and
Jinja2 load here, the library's readers and config models on the first request.
"""

from __future__ import annotations

from airflow.plugins_manager import AirflowPlugin

from coworkenv.ui.app import create_app
from coworkenv.ui.auth import airflow_user
from coworkenv.ui.refusal import RefuseBadSettings

URL_PREFIX = "/coworkenv"
CATEGORY = "CoworkEnv"
# Relative hrefs: the UI resolves them against Airflow's base URL, so the pages work under a base path too.
PAGES = {"Releases": "releases", "Evaluations": "evaluations", "Runs and gates": "runs"}


class CoworkEnvPlugin(AirflowPlugin):
    name = "coworkenv"
    fastapi_apps = [{"app": create_app(airflow_user), "url_prefix": URL_PREFIX, "name": "CoworkEnv pages"}]
    fastapi_root_middlewares = [
        {
            "middleware": RefuseBadSettings,
            "args": [],
            "kwargs": {},
            "name": "Refuse runs with bad settings before they start",
        },
    ]
    external_views = [
        *(
            {
                "name": title,
                "href": f"coworkenv/{page}",
                "url_route": f"coworkenv-{page}",
                "category": CATEGORY,
                "destination": "nav",
            }
            for title, page in PAGES.items()
        ),
        {
            "name": "CoworkEnv",
            "href": "coworkenv/dag-runs/{DAG_ID}/{RUN_ID}",
            "url_route": "coworkenv-dag-run",
            "destination": "dag_run",
        },
    ]
