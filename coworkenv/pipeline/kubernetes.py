"""The nightly loop's training stage as a Kubernetes pod (docs/operations.md, "GPU workers"): the pod the
`coworkenv_nightly` DAG's `train` task launches through the cncf.kubernetes provider's KubernetesPodOperator when
`COWORKENV_TRAIN_ON=kubernetes`, instead of running on a Celery worker of the `gpu` queue.

The pod runs `coworkenv nightly-stage train --run-id <run>` in the CoworkEnv image with the data root mounted from a
shared volume: the stage reads the run's recorded settings and the finished stages before it from the run directory
and records its result there, so the next DAG task (evaluate) goes on from the same files whichever way training
ran. Plain dicts (a v1 Pod manifest), so the library needs neither the provider nor the Kubernetes client; the
operator itself is made in the Airflow adapter (`pipeline.airflow.train_pod_operator`).
"""

from __future__ import annotations

import os
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from coworkenv.errors import CoworkEnvError, format_validation_error

ENV_PREFIX = "COWORKENV_TRAIN_"
RESULT_FILE_ENV = "COWORKENV_RESULT_FILE"
XCOM_FILE = "/airflow/xcom/return.json"  # where KubernetesPodOperator's sidecar reads a pod's XCom
BASE_CONTAINER = "base"  # the container KubernetesPodOperator merges its own arguments into
HF_OFFLINE = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE")


class TrainPodSettings(BaseModel):
    """Where and how the training stage runs; each field is the environment variable `COWORKENV_TRAIN_<FIELD>`, read
    when the DAG is parsed (the DAG's shape depends on `on`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    on: Literal["worker", "kubernetes"] = Field(
        "worker",
        description="worker: a task on the `gpu` queue and pool (Celery or local); kubernetes: a pod of its own.",
    )
    image: str = Field(
        "coworkenv-airflow:latest",
        min_length=1,
        description="Image with CoworkEnv installed (docker-compose.yml builds it).",
    )
    namespace: str = Field("default", min_length=1, description="Namespace of the pod.")
    gpus: int = Field(1, ge=0, le=16, description="`nvidia.com/gpu` limit of the pod (0: train on its CPUs).")
    cpu: str = Field("8", min_length=1, description="CPU request of the pod.")
    memory: str = Field("64Gi", min_length=1, description="Memory request and limit of the pod.")
    data_claim: str = Field(
        "coworkenv-data",
        min_length=1,
        description="PersistentVolumeClaim holding the data root (shared with the workers).",
    )
    data_mount: str = Field(
        "/data", min_length=1, description="Where the claim is mounted in the pod; the pod's COWORKENV_DATA_ROOT."
    )
    service_account: str | None = Field(None, description="Service account of the pod (default: the namespace's).")
    startup_timeout_s: int = Field(
        600, ge=10, le=86_400, description="How long the pod may wait for a GPU node and its image."
    )


def train_pod_settings(environ: dict[str, str] | None = None) -> TrainPodSettings:
    """The settings from `COWORKENV_TRAIN_*` variables; a bad value is one clear error naming the variable."""
    environ = os.environ if environ is None else environ
    values = {
        name: environ[ENV_PREFIX + name.upper()]
        for name in TrainPodSettings.model_fields
        if ENV_PREFIX + name.upper() in environ
    }
    try:
        return TrainPodSettings(**values)
    except ValidationError as exc:
        raise CoworkEnvError(f"training pod settings ({ENV_PREFIX}*): {format_validation_error(exc)}") from None


def train_command(run_id: str) -> list[str]:
    """What the pod runs: the nightly run's training stage, with its recorded settings."""
    return ["coworkenv", "nightly-stage", "train", "--run-id", run_id]


def train_pod(run_id: str, settings: TrainPodSettings) -> dict[str, Any]:
    """The v1 Pod manifest of one run's training. `run_id` may be a template (`{{ run_id }}`): the operator renders
    the manifest. The run id goes in an annotation, not a label (labels cannot hold `:` or `+`)."""
    limits: dict[str, str] = {"memory": settings.memory}
    if settings.gpus:
        limits["nvidia.com/gpu"] = str(settings.gpus)
    container = {
        "name": BASE_CONTAINER,
        "image": settings.image,
        "command": train_command(run_id),
        "env": [
            {"name": "COWORKENV_DATA_ROOT", "value": settings.data_mount},
            {"name": RESULT_FILE_ENV, "value": XCOM_FILE},  # the stage's result becomes the task's XCom
            *({"name": n, "value": "1"} for n in HF_OFFLINE),
        ],
        "resources": {"requests": {"cpu": settings.cpu, "memory": settings.memory}, "limits": limits},
        "volumeMounts": [{"name": "data", "mountPath": settings.data_mount}],
    }
    spec: dict[str, Any] = {
        "restartPolicy": "Never",  # a failed attempt is Airflow's to retry, with the stage's resume
        "containers": [container],
        "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": settings.data_claim}}],
    }
    if settings.gpus:
        spec["tolerations"] = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    if settings.service_account:
        spec["serviceAccountName"] = settings.service_account
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "coworkenv-train",
            "namespace": settings.namespace,
            "labels": {"app.kubernetes.io/name": "coworkenv", "app.kubernetes.io/component": "train"},
            "annotations": {"coworkenv/run-id": run_id},
        },
        "spec": spec,
    }
