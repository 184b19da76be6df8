"""Every job a DAG runs, by DAG id: the one map from which a DAG's trigger form is made and against which a
trigger's `conf` is checked before the run exists (`coworkenv.ui.refusal`), and the settings reference page."""

from __future__ import annotations

from pydantic import BaseModel

from coworkenv.pipeline.core_check import CoreCheckConfig
from coworkenv.pipeline.evaluation import EVALUATION
from coworkenv.pipeline.job import Job
from coworkenv.pipeline.nightly import NIGHTLY
from coworkenv.pipeline.synthesis import SYNTHESIS

JOBS: dict[str, Job] = {job.dag_id: job for job in (SYNTHESIS, EVALUATION, NIGHTLY) if job.dag_id is not None}


CORE_CHECK_DAG = "coworkenv_core_check"
"""The one DAG that is not a staged job (a mapped check over task files), with a config model all the same."""


def job_configs() -> dict[str, type[BaseModel]]:
    """DAG id → the config model of its runs."""
    configs = {dag_id: job.config for dag_id, job in JOBS.items() if job.config is not None}
    return {**configs, CORE_CHECK_DAG: CoreCheckConfig}
