"""
### CoworkEnv synthesis run

Makes a new **task release**: capability-guided plan → procedural/LLM generation (mapped shards) → the sandboxed
validation battery (mapped shards) → feedback-based repair of the rejects → oracle rollouts (sandboxed) → release
tables (tasks, validations, repairs, trajectories, SFT and RL rows) → **Great Expectations gates** → atomic
publication under `<data root>/releases/<id>/` with `LATEST` flipped last. A failing gate stops the run before
anything is published; its Data Docs report is under `<data root>/runs/<run id>/quality/`.

Every task calls one stage of `coworkenv.pipeline` over the run directory `<data root>/runs/<run id>/`; outside
Airflow, `coworkenv synthesize` runs the same stages (`--run-id` the same run id publishes the same release).
Trigger it from the UI form (generated from `SynthesisConfig`; every field has a description) or the REST API with a
`conf`. The published release updates the `coworkenv-task-release` asset.
"""

from __future__ import annotations

from datetime import timedelta

from coworkenv.pipeline.airflow import job_dag
from coworkenv.pipeline.synthesis import SYNTHESIS

job_dag(
    SYNTHESIS,
    doc_md=__doc__,
    description="A new task release: " + " → ".join(SYNTHESIS.names()),
    schedule=None,
    catchup=False,
    max_active_runs=2,
    tags=["coworkenv", "synthesis", "release"],
    default_args={"owner": "coworkenv", "retries": 2, "retry_delay": timedelta(seconds=20)},
)
