"""Synthesis throughput from trigger to published release: the embedded profile against the cluster profile with one
and with two Celery workers, on this machine, and where the time goes (the stages' own work against scheduling).

Method: for each mode, start that Airflow (embedded: `make airflow-standalone`, tests/dags/standalone.py; cluster: a
throwaway Postgres database and Redis DB, scheduler, DAG processor, API server and N workers on the `default` queue,
tests/dags/cluster.py), trigger `coworkenv_synthesize` through the REST API with the same settings, wait for success,
then read every task instance's start and end from the REST API. Reported per mode:
- **tasks/s**: valid tasks published over the time from the trigger to the run's success (client clock);
- **critical path**: the longest chain of task durations through the DAG (plan → slowest generate shard → slowest
  validate shard → repair → rollout → build → gate → publish), i.e. the run time with zero scheduling delay;
- **scheduling**: run time minus critical path (queueing, worker pick-up, process start, XCom and DB round trips);
- per stage: instances, summed and longest duration.
Each mode runs in its own home and data root; services are stopped by process group and dropped afterwards.

    python bench/cluster_throughput.py                              # markdown table, 200 tasks in 4 shards
    python bench/cluster_throughput.py --n 400 --shards 8 --json
    python bench/cluster_throughput.py --modes embedded cluster-2
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from _common import calibrated, calibration, calibration_line, machine_info  # noqa: E402

from coworkenv.airflow_env import COMMANDS  # noqa: E402
from coworkenv.pipeline.synthesis import SYNTHESIS  # noqa: E402
from tests.dags.cluster import Cluster, services_missing  # noqa: E402
from tests.dags.standalone import Standalone, free_port  # noqa: E402

DAG = "coworkenv_synthesize"
CHAIN = SYNTHESIS.names()
MODES = ("embedded", "cluster-1", "cluster-2")


def _seconds(ti: dict[str, Any]) -> float:
    start, end = ti.get("start_date"), ti.get("end_date")
    if not (start and end):
        return 0.0
    return (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds()


def measure(server: Any, conf: dict[str, Any]) -> dict[str, Any]:
    """Trigger one run, wait for it, and split its time into the stages' work and scheduling."""
    started = time.monotonic()
    run_id = server.trigger(DAG, conf)
    state = server.wait_for_run(DAG, run_id)
    wall = time.monotonic() - started
    if state != "success":
        raise SystemExit(f"run {run_id} ended {state}: {server.tail()}")
    tis = server.request("GET", f"/api/v2/dags/{DAG}/dagRuns/{run_id}/taskInstances?limit=500")["task_instances"]
    stages: dict[str, dict[str, Any]] = {}
    for ti in tis:
        stage = stages.setdefault(ti["task_id"], {"instances": 0, "sum_s": 0.0, "max_s": 0.0, "hosts": set()})
        seconds = _seconds(ti)
        stage["instances"] += 1
        stage["sum_s"] += seconds
        stage["max_s"] = max(stage["max_s"], seconds)
        stage["hosts"].add(ti.get("hostname") or "")
    critical = sum(stages[s]["max_s"] for s in CHAIN if s in stages)
    publish = server.request(
        "GET", f"/api/v2/dags/{DAG}/dagRuns/{run_id}/taskInstances/publish/xcomEntries/return_value"
    )
    value = publish["value"] if isinstance(publish["value"], dict) else json.loads(publish["value"])
    tasks = value["row_counts"]["tasks"]
    return {
        "run_id": run_id,
        "tasks": tasks,
        "wall_s": round(wall, 1),
        "tasks_per_s": round(tasks / wall, 2),
        "critical_path_s": round(critical, 1),
        "scheduling_s": round(wall - critical, 1),
        "stages": {
            s: {**v, "sum_s": round(v["sum_s"], 1), "max_s": round(v["max_s"], 1), "hosts": sorted(v["hosts"])}
            for s, v in stages.items()
        },
    }


def run_embedded(base: Path, conf: dict[str, Any]) -> dict[str, Any]:
    server = Standalone(base / "home", free_port(), base / "standalone.log")
    started = time.monotonic()
    try:
        server.start()
        ready = time.monotonic() - started
        return {"ready_s": round(ready, 1), **measure(server, conf)}
    finally:
        server.stop()


def run_cluster(base: Path, conf: dict[str, Any], workers: int, concurrency: int) -> dict[str, Any]:
    reason = services_missing()
    if reason:
        raise SystemExit(reason)
    cluster = Cluster(base)
    started = time.monotonic()
    try:
        cluster.create()
        for component in ("scheduler", "dag-processor", "api-server"):
            cluster.start(component, COMMANDS[component])
        names = [f"worker-{i + 1}" for i in range(workers)]
        for name in names:
            cluster.start_worker(name, "worker", "default", concurrency=concurrency)
        cluster.wait_until_ready(names)
        ready = time.monotonic() - started
        return {"ready_s": round(ready, 1), **measure(cluster, conf)}
    finally:
        cluster.stop()
        cluster.drop()


def table(results: dict[str, dict[str, Any]]) -> str:
    lines = [
        "| mode | ready (s) | tasks | trigger → success (s) | tasks/s | tasks/s per 1k calib | critical path (s) | scheduling (s) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for mode, r in results.items():
        calib = f"{r['tasks_per_s_per_1k_calib']:.3f}"
        cells = [
            r["ready_s"],
            r["tasks"],
            r["wall_s"],
            r["tasks_per_s"],
            calib,
            r["critical_path_s"],
            r["scheduling_s"],
        ]
        lines.append(f"| {mode} | " + " | ".join(str(c) for c in cells) + " |")
    lines += ["", "| mode | " + " | ".join(CHAIN) + " |", "|---|" + "---|" * len(CHAIN)]
    for mode, r in results.items():
        cells = [
            f"{r['stages'][s]['instances']}× Σ{r['stages'][s]['sum_s']} max {r['stages'][s]['max_s']}"
            if s in r["stages"]
            else "—"
            for s in CHAIN
        ]
        lines.append(f"| {mode} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=200, help="tasks per run")
    parser.add_argument("--shards", type=int, default=4, help="generation and validation shards (mapped tasks)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--concurrency", type=int, default=2, help="task slots per Celery worker")
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    conf = {"n": args.n, "seed": args.seed, "shards": args.shards, "workers": 1}
    calib = calibration()
    results: dict[str, dict[str, Any]] = {}
    for mode in args.modes:
        with tempfile.TemporaryDirectory(prefix=f"cw-{mode}-") as tmp:
            if mode == "embedded":
                results[mode] = run_embedded(Path(tmp), conf)
            else:
                results[mode] = run_cluster(
                    Path(tmp), conf, workers=int(mode.split("-")[1]), concurrency=args.concurrency
                )
        results[mode]["tasks_per_s_per_1k_calib"] = calibrated(results[mode]["tasks_per_s"], calib)
        print(f"{mode}: {results[mode]['tasks']} tasks in {results[mode]['wall_s']} s", file=sys.stderr)
    if args.json:
        print(
            json.dumps(
                {"machine": machine_info(None), "calibration": calib, "conf": conf, "results": results}, indent=2
            )
        )
    else:
        print(
            f"machine: {machine_info(None)}\n{calibration_line(calib)}\nconf: {conf}, {args.concurrency} slots per worker\n"
        )
        print(table(results))


if __name__ == "__main__":
    main()
