"""What CoworkEnv adds to Airflow's API server, registered by its plugin (`plugins/coworkenv_plugin.py`): the read-only
web pages over the data root (`app.create_app`; docs/design/pipeline.md, "UI") and the check of a trigger's settings
(`refusal`; "Trigger forms and refusals"). The library imports nothing from here, and nothing is imported here:
Airflow imports the plugin in every component, so the package stays import-light.
"""
