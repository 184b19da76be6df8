"""
### CoworkEnv nightly loop

Every night (or when triggered with the form), one turn of the closed loop on the model named `model_name` in the
registry under the data root:

**profile** (the current model's capability profile on the held-out suite; an empty registry starts from the tiny
model) → **synthesize** `budget` training tasks planned from that profile → **gate_tasks** (`validated` and
`rollouts` gates, then the release) → **rollouts** (the current model plays each task `trials` times: rejection
sampling) → **gate_rollouts** (`evaluated` gate; its successes join the oracle's trajectories) → **train** (SFT, then
GRPO, GDPO or DPO per `method`) → **evaluate** the candidate on the held-out suite (contamination-checked
against every release its lineage trained on) → **gate_eval** → **promote** (only with a margin, a significant
paired difference and no safety regression; the reason is recorded) → **new_profile** for the next night.

The stages that run a local model (profile, rollouts, train, evaluate) go to the `gpu` queue and pool (the cluster
profile's GPU workers); the others to the `default` queue. A failing gate fails the run with nothing promoted. A task
that is retried or cleared resumes: finished stages are recorded in `<data root>/runs/<run id>/nightly/state.json` and
are not run again. `coworkenv nightly` runs the same stages outside Airflow.
"""

from __future__ import annotations

from datetime import timedelta

from coworkenv.pipeline.airflow import job_dag, train_pod_operator
from coworkenv.pipeline.kubernetes import train_pod_settings
from coworkenv.pipeline.nightly import NIGHTLY

TRAIN_POD = train_pod_settings()  # COWORKENV_TRAIN_ON=kubernetes: training in a pod of its own (docs/operations.md)

job_dag(
    NIGHTLY,
    doc_md=__doc__,
    description="Profile → synthesize → rollouts → train → evaluate → promote, on the registry's current model.",
    schedule="@daily",
    catchup=False,
    max_active_runs=1,
    tags=["coworkenv", "training", "nightly"],
    default_args={"owner": "coworkenv", "retries": 1, "retry_delay": timedelta(seconds=30)},
    operators={"train": lambda **task: train_pod_operator(TRAIN_POD, **task)} if TRAIN_POD.on == "kubernetes" else None,
)
