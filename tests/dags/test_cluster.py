"""The `cluster` profile for real on this machine: Postgres metadata DB, CeleryExecutor with Redis, the scheduler, the
DAG processor, the API server and two Celery workers as local processes (tests/dags/cluster.py), driven through the
REST API as the UI does.

- `cpu-worker` serves the `default` queue; `gpu-worker` serves `gpu` and also `default`, so that the mapped shards of
  one run spread over two workers while only one worker can take GPU stages (the profile's own GPU worker serves
  `gpu` alone: on a real cluster the GPU box is kept for GPU work).
- The synthesis run's mapped shards run on both workers; its release is read back through `coworkenv sql`.
- A GPU stage of the real nightly DAG runs on the GPU worker: `profile`, its first task, which evaluates the tiny
  model on a held-out suite with the `hf:` agent (local-model evaluation), in the `gpu` pool the setup created. The
  rest of that night (synthesis, training) is not this test's subject; the run is stopped once `profile` is done.
- A worker SIGKILLed while it runs a shard: the scheduler sees the missing task heartbeats, the shard is retried on
  the other worker, and the run publishes the same release as an undisturbed run of the same settings, once.

Skipped with the reason where PostgreSQL (127.0.0.1:5432, trust auth) or Redis (127.0.0.1:6379) do not answer; `.ci/run`
installs and starts both where they are missing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from coworkenv.airflow_env import COMMANDS, GPU_QUEUE
from tests.dags.cluster import Cluster, admin_cursor, services_missing
from tests.support import ROOT

pytestmark = [pytest.mark.airflow, pytest.mark.slow, pytest.mark.integration, pytest.mark.xdist_group("airflow")]

CONF = {"n": 12, "seed": 23, "shards": 4, "workers": 1, "difficulty_min": 1, "difficulty_max": 3}
"""Not the defaults (2 shards): four generation and four validation shards to spread over two workers."""
SHARDS = ("generate", "validate")
WORKERS = {"cpu-worker": ("worker", "default"), "gpu-worker": ("worker-gpu", f"default,{GPU_QUEUE}")}
COWORKENV = Path(sys.executable).parent / "coworkenv"
SYNTH = "coworkenv_synthesize"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory):
    reason = services_missing()
    if reason:
        pytest.skip(reason)
    started = time.monotonic()
    cluster = Cluster(tmp_path_factory.mktemp("cluster"))
    try:
        cluster.create()
        for component in ("scheduler", "dag-processor", "api-server"):
            cluster.start(component, COMMANDS[component])
        for name, (command, queues) in WORKERS.items():
            cluster.start_worker(name, command, queues, concurrency=2)
        cluster.wait_until_ready(list(WORKERS))
        print(f"cluster ready in {time.monotonic() - started:.0f} s")
        yield cluster
    finally:
        trees = {name: cluster.tree(name) for name in cluster.processes}
        cluster.stop()
        cluster.drop()
        left = [
            f"{name}: {p.pid}"
            for name, procs in trees.items()
            for p in procs
            if p.is_running() and p.status() != "zombie"
        ]
        assert not left, f"processes left running: {left}"
        assert not _database_exists(cluster.database)


def _database_exists(name: str) -> bool:
    with admin_cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,))
        return cursor.fetchone() is not None


def task_instances(cluster: Cluster, dag_id: str, run_id: str) -> list[dict]:
    return cluster.request("GET", f"/api/v2/dags/{dag_id}/dagRuns/{run_id}/taskInstances?limit=200")["task_instances"]


def tries(cluster: Cluster, dag_id: str, run_id: str, task_id: str, map_index: int) -> list[dict]:
    path = f"/api/v2/dags/{dag_id}/dagRuns/{run_id}/taskInstances/{task_id}/{map_index}/tries"
    return sorted(cluster.request("GET", path)["task_instances"], key=lambda t: t["try_number"])


def running_shard_on_cpu_worker(cluster: Cluster, run_id: str) -> dict | None:
    instances = task_instances(cluster, SYNTH, run_id)
    return next(
        (
            ti
            for ti in instances
            if ti["task_id"] in SHARDS and ti["state"] == "running" and ti["hostname"] == "cpu-worker"
        ),
        None,
    )


def sql(cluster: Cluster, statement: str, release: str = "latest") -> list[dict]:
    """`coworkenv sql` over the cluster's data root, as a user would run it."""
    result = subprocess.run(
        [
            str(COWORKENV),
            "sql",
            statement,
            "--release",
            release,
            "--format",
            "json",
            "--data-root",
            str(cluster.data_root),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COWORKENV_DATA_ROOT": str(cluster.data_root)},
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def releases_of(cluster: Cluster, run_id: str) -> list:
    from coworkenv.data.reader import list_releases

    return [m for m in list_releases(str(cluster.data_root)) if m.run_id == run_id]


@pytest.fixture(scope="module")
def reference(cluster: Cluster) -> dict:
    """An undisturbed synthesis run with CONF: its run id, seconds from trigger to success, its release."""
    started = time.monotonic()
    run_id = cluster.trigger(SYNTH, CONF)
    assert cluster.wait_for_run(SYNTH, run_id) == "success", cluster.tail()
    (manifest,) = releases_of(cluster, run_id)
    return {"run_id": run_id, "seconds": time.monotonic() - started, "release_id": manifest.release_id}


def test_mapped_shards_run_on_both_workers_and_the_release_is_published(cluster: Cluster, reference: dict) -> None:
    from coworkenv.data.reader import verify_release

    print(f"synthesis run: {reference['seconds']:.0f} s from trigger to success")
    instances = task_instances(cluster, SYNTH, reference["run_id"])
    assert {ti["state"] for ti in instances} == {"success"}
    assert {ti["queue"] for ti in instances} == {"default"}
    shards = [ti for ti in instances if ti["task_id"] in SHARDS]
    assert sorted(ti["map_index"] for ti in shards) == sorted([*range(4), *range(4)])
    assert {ti["hostname"] for ti in shards} == set(WORKERS), [
        (ti["task_id"], ti["map_index"], ti["hostname"]) for ti in shards
    ]
    query = (
        "select count(*) as tasks, count(distinct task_id) as ids, any_value(release_id) as release_id from src_tasks"
    )
    (row,) = sql(cluster, query, reference["release_id"])
    assert row == {"tasks": 12, "ids": 12, "release_id": reference["release_id"]}
    assert verify_release(str(cluster.data_root), reference["release_id"]) == []


def test_a_gpu_stage_of_the_nightly_runs_on_the_gpu_worker_in_the_gpu_pool(cluster: Cluster) -> None:
    from coworkenv.eval.suite import build_bench

    pools = {pool["name"]: pool for pool in cluster.request("GET", "/api/v2/pools")["pools"]}
    assert pools["gpu"]["slots"] == 1
    bench = build_bench(4, seed=3, data_root=str(cluster.data_root), runtime="none", workers=1)
    conf = {
        "suite": bench.release_id,
        "eval_trials": 1,
        "eval_limit": 2,
        "max_new_tokens": 8,
        "runtime": "none",
        "workers": 1,
        "model_name": "cluster-test",
        "budget": 4,
    }
    started = time.monotonic()
    run_id = cluster.trigger("coworkenv_nightly", conf)
    deadline = time.monotonic() + 300
    while True:
        # The nightly is @daily with max_active_runs=1: a run the scheduler makes at midnight UTC would hold the
        # triggered one back (and the gpu slot), so any run but ours is ended as soon as it shows.
        for other in cluster.runs("coworkenv_nightly"):
            if other["dag_run_id"] != run_id and other["state"] in ("queued", "running"):
                cluster.request(
                    "PATCH", f"/api/v2/dags/coworkenv_nightly/dagRuns/{other['dag_run_id']}", {"state": "failed"}
                )
        (profile,) = [ti for ti in task_instances(cluster, "coworkenv_nightly", run_id) if ti["task_id"] == "profile"]
        if profile["state"] in ("success", "failed", "upstream_failed") or time.monotonic() > deadline:
            break
        cluster.check_alive()
        time.sleep(1)
    seconds = time.monotonic() - started
    cluster.request(
        "PATCH", f"/api/v2/dags/coworkenv_nightly/dagRuns/{run_id}", {"state": "failed"}
    )  # the rest of the night is not tested here
    print(f"nightly profile on the gpu worker: {seconds:.0f} s from trigger")
    assert profile["state"] == "success", cluster.tail()
    assert (profile["queue"], profile["pool"], profile["hostname"]) == (GPU_QUEUE, "gpu", "gpu-worker")


def test_a_worker_killed_mid_shard_loses_nothing_and_publishes_once(cluster: Cluster, reference: dict) -> None:
    from coworkenv.data.reader import verify_release

    started = time.monotonic()
    run_id = cluster.trigger(SYNTH, CONF)
    victim = None
    deadline = time.monotonic() + 300
    while victim is None and time.monotonic() < deadline:
        if running_shard_on_cpu_worker(cluster, run_id):
            # A shard seen running may end before a kill lands (a run's shards take seconds). The worker's tree is
            # frozen first and the shard looked up again: what is still running now cannot finish before the kill.
            groups = cluster.freeze("cpu-worker")
            time.sleep(1)  # a state report already on its way lands in the metadata DB
            victim = running_shard_on_cpu_worker(cluster, run_id)
            if victim is None:
                cluster.thaw(groups)
        time.sleep(0.3)
    assert victim, f"no shard ran on cpu-worker: {cluster.tail()}"
    cluster.kill("cpu-worker")
    killed = datetime.now(UTC)
    assert cluster.wait_for_run(SYNTH, run_id) == "success", cluster.tail()
    history = tries(cluster, SYNTH, run_id, victim["task_id"], victim["map_index"])
    assert history[0]["hostname"] == "cpu-worker" and history[0]["state"] != "success"
    assert (
        history[-1]["state"] == "success" and history[-1]["hostname"] == "gpu-worker" and history[-1]["try_number"] > 1
    )
    recovered = datetime.fromisoformat(history[-1]["end_date"]) - killed
    print(
        f"worker-kill run: {time.monotonic() - started:.0f} s from trigger to success; {victim['task_id']} shard "
        f"{victim['map_index']} done again {recovered.total_seconds():.0f} s after its worker was killed"
    )

    (manifest,) = releases_of(cluster, run_id)  # published once
    assert verify_release(str(cluster.data_root), manifest.release_id) == []
    query = "select task_id, family, difficulty, spec_hash from src_tasks order by task_id"
    ours, theirs = sql(cluster, query, manifest.release_id), sql(cluster, query, reference["release_id"])
    assert len(ours) == 12 and ours == theirs  # nothing lost, nothing extra: the undisturbed run's tasks
