"""The one orchestration (docs/design/pipeline.md, "Pipeline"): one module per stage — plan, generate, validate, repair,
rollout, build, gate, publish — each a plain function over the run directory (`rundir.py`), declared once as the
synthesis job (`job.py`; `synthesize.SYNTHESIS`, and the evaluation job `evaluate.EVALUATION`). `synthesize` runs them
in order, the `coworkenv_synthesize` DAG one task per stage and the CLI one command per stage. `config.py` is the
job's configuration; `airflow.py` is all the Airflow-specific code (the trigger form, connections); `core_check.py`
checks trusted task files."""
