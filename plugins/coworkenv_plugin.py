"""CoworkEnv's Airflow plugin: Airflow imports this module in the API server, the scheduler and the DAG processor, so
it stays thin; what it registers lives in `coworkenv.ui` and imports the library on first use."""

from __future__ import annotations

from airflow.plugins_manager import AirflowPlugin

from coworkenv.ui.refusal import RefuseBadSettings


class CoworkEnvPlugin(AirflowPlugin):
    name = "coworkenv"
    fastapi_root_middlewares = [
        {"middleware": RefuseBadSettings, "args": [], "kwargs": {}, "name": "Refuse runs with bad settings before they start"},
    ]
