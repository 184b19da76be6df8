"""The read-only web pages over the data root (docs/architecture.md, "UI"): releases, evaluations, runs and their gates.

`app.create_app` builds the FastAPI app that the Airflow plugin (`plugins/coworkenv_plugin.py`) mounts in the API
server. Nothing is imported here: Airflow imports the plugin in every component, so the package stays import-light.
"""
