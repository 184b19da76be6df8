"""The one orchestration (docs/design/pipeline.md, "Pipeline"): each job a folder of stage modules — `synthesis/`
(plan, generate, validate, repair, rollout, build, gate, publish), `evaluation/`, `nightly/` — each stage a plain
function over the run directory (`rundir.py`), declared once in its folder's `__init__.py` as a `job.Job`; the three
jobs by DAG id: `all_jobs.JOBS`. From the declaration the job runs in one process, its DAG runs one task per stage
and the CLI one command per stage. `config.py` holds the jobs' configurations; `release_tables.py` the staged tables
every job builds, gates and publishes; `airflow.py` all the Airflow-specific code (the trigger form, connections);
`core_check.py` checks trusted task files."""
