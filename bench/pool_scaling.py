"""Validation throughput of the sandboxed worker pool with 1, 2 and 4 workers, against the battery in-process.

Method: `n` procedural tasks (`generate(GenerateRequest(n, seed=1))`, `spec.to_json()`, not timed), then, interleaved
repeat by repeat after a warm-up, median of `--repeats`:
- **in-process**: `validate_tasks(texts, runtime="none")`, the battery in this process (no isolation);
- **pool xK, steady**: `WorkerPool.map("validate", texts)` on an already started pool of K workers (what each batch of a
  long shard costs: the stage keeps one pool for all its batches), with the parent's CPU time, and how busy the
  workers were (the sum of the tasks' round-trip times over K × wall clock: 100 % is every worker busy all the time);
- **pool xK, whole call**: `validate_tasks(texts, runtime=..., workers=K)`, pool start-up and shutdown included;
- **echo xK**: the pool's trivial inline job (the payload back): the pure cost of a round trip.
Per-task overhead of the pool is `(pool x1 steady - in-process) / n` (the sandbox's round trip and the parent parsing
the verdict), and `echo x1 / n` its floor. Rates are also given per 1,000 operations of the calibration workload
(`bench/_common.py`, `calibration()`), measured in the same run, so machines (or loads) can be compared.

    python bench/pool_scaling.py                 # markdown table, bwrap when usable (else rlimit)
    python bench/pool_scaling.py --n 200 --repeats 3 --runtime rlimit --json
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

REPO = Path(__file__).resolve().parents[1]
for path in (REPO, REPO / "bench"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from _common import calibrated, calibration, machine_info  # noqa: E402

from coworkenv.sandbox.limits import Limits  # noqa: E402
from coworkenv.sandbox.pool import WorkerPool  # noqa: E402
from coworkenv.sandbox.selection import bwrap_usable, get_runtime  # noqa: E402
from coworkenv.validate.batch import validate_tasks  # noqa: E402
from coworkenv.validate.jobs import JOB_NAME as VALIDATE  # noqa: E402 - registers the job

WORKERS = (1, 2, 4)


def _timed(work: Callable[[], Any]) -> tuple[float, float, Any]:
    """(wall s, this process's CPU s, the result)."""
    gc.collect()
    start, cpu = time.perf_counter(), time.process_time()
    result = work()
    return time.perf_counter() - start, time.process_time() - cpu, result


def run(n: int, repeats: int, runtime_name: str) -> dict[str, Any]:
    from coworkenv.synth.generate import GenerateRequest, generate

    specs, _ = generate(GenerateRequest(n=n, seed=1))
    texts = [spec.to_json() for spec in specs]
    runtime = get_runtime(runtime_name)
    limits = Limits(wall_s=120, cpu_s=60)
    samples: dict[str, list[tuple[float, float, float]]] = {}  # mode -> (wall, parent CPU, busy share)

    def keep(mode: str, wall: float, cpu: float, busy: float = 0.0) -> None:
        samples.setdefault(mode, []).append((wall, cpu, busy))

    expected = [v.model_dump_json() for v in validate_tasks(texts, runtime="none")]  # warm-up, and the reference
    pools = {
        k: WorkerPool(workers=k, runtime=runtime, limits=limits, warm=[VALIDATE], jobs=[VALIDATE, "echo"])
        for k in WORKERS
    }
    try:
        for pool in pools.values():
            pool.start()
            pool.map(VALIDATE, texts[: max(8, n // 10)])  # warm-up
        for _ in range(repeats):
            wall, cpu, _ = _timed(lambda: validate_tasks(texts, runtime="none"))
            keep("in-process", wall, cpu)
            for k, pool in pools.items():
                wall, cpu, results = _timed(lambda pool=pool: pool.map(VALIDATE, texts))
                if not all(r.ok for r in results):
                    raise SystemExit(f"validate failed in the pool: {next(r for r in results if not r.ok)}")
                keep(f"pool x{k}", wall, cpu, sum(r.duration_s for r in results) / (k * wall))
                wall, cpu, results = _timed(lambda pool=pool: pool.map("echo", texts))
                keep(f"echo x{k}", wall, cpu, sum(r.duration_s for r in results) / (k * wall))
                wall, cpu, verdicts = _timed(
                    lambda k=k: validate_tasks(texts, runtime=runtime_name, workers=k, limits=limits)
                )
                if [v.model_dump_json() for v in verdicts] != expected:
                    raise SystemExit(f"the pool's verdicts with {k} workers differ from the in-process battery's")
                keep(f"whole call x{k}", wall, cpu)
    finally:
        for pool in pools.values():
            pool.close()
    calib = calibration()
    modes = {}
    for mode, values in samples.items():
        wall = statistics.median(v[0] for v in values)
        rate = n / wall
        modes[mode] = {
            "wall_s": wall,
            "tasks_per_s": rate,
            "per_1000_calibration_ops": calibrated(rate, calib),
            "parent_cpu_us_per_task": statistics.median(v[1] for v in values) / n * 1e6,
            "busy": statistics.median(v[2] for v in values),
        }
    base = modes["in-process"]["wall_s"]
    return {
        "n": n,
        "repeats": repeats,
        "runtime": runtime_name,
        "machine": machine_info(None),
        "load_average": os.getloadavg(),
        "calibration": calib,
        "modes": modes,
        "pool_overhead_us_per_task": (modes["pool x1"]["wall_s"] - base) / n * 1e6,
        "round_trip_us_per_task": modes["echo x1"]["wall_s"] / n * 1e6,
        "speedup_vs_in_process": {str(k): base / modes[f"pool x{k}"]["wall_s"] for k in WORKERS},
        "scaling_vs_1_worker": {str(k): modes["pool x1"]["wall_s"] / modes[f"pool x{k}"]["wall_s"] for k in WORKERS},
    }


def markdown(result: dict[str, Any]) -> str:
    m, calib = result["machine"], result["calibration"]
    lines = [
        f"n = {result['n']} tasks, median of {result['repeats']}, runtime {result['runtime']}; {m['cpu']}, {m['logical_cpus']} logical CPUs, "
        f"Python {m['python']}, load average {', '.join(f'{x:.2f}' for x in result['load_average'])}; calibration "
        f"{calib['ops_per_cpu_s']:,.0f} ops/CPU-s ({calib['us_per_op']:.1f} µs/op)",
        "",
        "| mode | tasks/s | per 1,000 calibration ops | vs in-process | vs 1 worker | parent CPU per task | workers busy |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for mode, v in result["modes"].items():
        k = mode.rsplit("x", 1)[1] if mode.startswith("pool x") else None  # JSON keys: "1", "2", "4"
        versus = f"{result['speedup_vs_in_process'][k]:.2f}x" if k else ("1.00x" if mode == "in-process" else "")
        scaling = f"{result['scaling_vs_1_worker'][k]:.2f}x" if k else ""
        busy = f"{v['busy']:.0%}" if v["busy"] else ""
        lines.append(
            f"| {mode} | {v['tasks_per_s']:,.0f} | {v['per_1000_calibration_ops']:.1f} | {versus} | {scaling} | "
            f"{v['parent_cpu_us_per_task']:,.0f} µs | {busy} |"
        )
    lines += [
        "",
        f"Pool overhead per task (pool x1 steady - in-process): {result['pool_overhead_us_per_task']:,.0f} µs; "
        f"a round trip of the trivial `echo` job: {result['round_trip_us_per_task']:,.0f} µs per task.",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=200, help="tasks (default 200)")
    parser.add_argument("--repeats", type=int, default=3, help="timed repeats per mode, interleaved (median reported)")
    parser.add_argument("--runtime", default="", help="bwrap or rlimit (default: bwrap when usable, else rlimit)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON instead of a markdown table")
    args = parser.parse_args(argv)
    runtime = args.runtime or ("bwrap" if bwrap_usable()[0] else "rlimit")
    result = run(args.n, args.repeats, runtime)
    print(json.dumps(result, indent=2) if args.json else markdown(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
