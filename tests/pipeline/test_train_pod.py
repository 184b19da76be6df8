"""The nightly loop's training as a Kubernetes pod (`coworkenv.pipeline.kubernetes`): the manifest the DAG's
KubernetesPodOperator launches, its settings from the environment. What the pod runs is tested for real in
tests/pipeline/test_nightly.py (the manifest's own command and environment, on a stopped run)."""

from __future__ import annotations

import re

import pytest

from coworkenv.errors import CoworkEnvError
from coworkenv.pipeline.kubernetes import BASE_CONTAINER, TrainPodSettings, train_command, train_pod, train_pod_settings

LABEL = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?$")
RUN = "scheduled__2026-12-02T00:00:00+00:00"


def test_the_pod_runs_the_runs_training_stage_on_a_gpu_with_the_shared_data_root() -> None:
    pod = train_pod(RUN, TrainPodSettings())
    assert (pod["apiVersion"], pod["kind"], pod["metadata"]["namespace"]) == ("v1", "Pod", "default")
    (container,) = pod["spec"]["containers"]
    assert container["name"] == BASE_CONTAINER and container["image"] == "coworkenv-airflow:latest"
    assert container["command"] == ["coworkenv", "nightly-stage", "train", "--run-id", RUN] == train_command(RUN)
    env = {e["name"]: e["value"] for e in container["env"]}
    assert env["COWORKENV_DATA_ROOT"] == "/data" and env["HF_HUB_OFFLINE"] == env["TRANSFORMERS_OFFLINE"] == "1"
    assert env["COWORKENV_RESULT_FILE"] == "/airflow/xcom/return.json"
    assert container["resources"]["limits"] == {"memory": "64Gi", "nvidia.com/gpu": "1"}
    assert container["volumeMounts"] == [{"name": "data", "mountPath": "/data"}]
    assert pod["spec"]["volumes"] == [{"name": "data", "persistentVolumeClaim": {"claimName": "coworkenv-data"}}]
    assert pod["spec"]["tolerations"] == [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    assert pod["spec"]["restartPolicy"] == "Never"
    # the run id (with `:` and `+`) is an annotation; every label is a valid label value
    assert pod["metadata"]["annotations"] == {"coworkenv/run-id": RUN}
    assert all(LABEL.match(value) for value in pod["metadata"]["labels"].values())


def test_settings_come_from_the_environment_and_shape_the_pod() -> None:
    environ = {
        "COWORKENV_TRAIN_ON": "kubernetes",
        "COWORKENV_TRAIN_GPUS": "4",
        "COWORKENV_TRAIN_IMAGE": "reg/cw:1.2",
        "COWORKENV_TRAIN_DATA_CLAIM": "team-data",
        "COWORKENV_TRAIN_SERVICE_ACCOUNT": "trainer",
        "OTHER": "x",
    }
    settings = train_pod_settings(environ)
    assert settings.on == "kubernetes" and settings.gpus == 4
    pod = train_pod("{{ run_id }}", settings)
    assert pod["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == "4"
    assert pod["spec"]["containers"][0]["image"] == "reg/cw:1.2" and pod["spec"]["serviceAccountName"] == "trainer"
    assert pod["spec"]["containers"][0]["command"][-1] == "{{ run_id }}"  # rendered by the operator
    assert pod["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"] == "team-data"
    cpu_only = train_pod(RUN, TrainPodSettings(gpus=0))
    assert (
        "nvidia.com/gpu" not in cpu_only["spec"]["containers"][0]["resources"]["limits"]
        and "tolerations" not in cpu_only["spec"]
    )
    assert train_pod_settings({}).on == "worker"


@pytest.mark.parametrize(
    ("environ", "named"),
    [
        ({"COWORKENV_TRAIN_ON": "k8s"}, "on"),
        ({"COWORKENV_TRAIN_GPUS": "many"}, "gpus"),
        ({"COWORKENV_TRAIN_GPUS": "-1"}, "gpus"),
    ],
)
def test_a_bad_setting_is_one_clear_error(environ, named) -> None:
    with pytest.raises(CoworkEnvError, match=rf"training pod settings \(COWORKENV_TRAIN_\*\): .*{named}"):
        train_pod_settings(environ)
