"""Every job a DAG runs, by DAG id: the one map from which a DAG's trigger form is made and against which a
trigger's `conf` is checked before the run exists (`coworkenv.ui.refusal`), and the settings reference page."""

from __future__ import annotations

from pydantic import BaseModel

from coworkenv.pipeline.evaluation import EVALUATION
from coworkenv.pipeline.job import Job
from coworkenv.pipeline.nightly import NIGHTLY
from coworkenv.pipeline.synthesis import SYNTHESIS

JOBS: dict[str, Job] = {job.dag_id: job for job in (SYNTHESIS, EVALUATION, NIGHTLY) if job.dag_id is not None}


def job_configs() -> dict[str, type[BaseModel]]:
    """DAG id → the config model of its runs."""
    return {dag_id: job.config for dag_id, job in JOBS.items() if job.config is not None}
