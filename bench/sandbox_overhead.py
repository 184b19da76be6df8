"""Sandbox overhead per task: in-process vs a pool of sandboxed workers (bwrap and the rlimit fallback).

Method: for each job, run the same payloads
- **in-process**: the job function called directly in this process (no sandbox, no isolation);
- **pool/<runtime>, K workers**: `WorkerPool.map` on an already started pool (steady state: what a long run costs
  per task), for K = 1 and K = 2;
and separately time how long starting one sandboxed worker takes (`startup`). Jobs:
- `echo`: a trivial inline job (the payload back): the pure cost of the pool's round trip (JSON line, thread, pipe);
- `exec`: trivial Python source (`pass`) in a child forked per task: what untrusted code pays for a fresh process;
- `validate`: the validation battery over generated tasks (`generate(GenerateRequest(n, seed=1))`, `spec.to_json()`).
Each measurement is repeated (`--repeats`, interleaved) after a warm-up, and the median is reported. Overhead per task
is `(pool with 1 worker − in-process) / n`, in µs; tasks/s is with 2 workers (the host's cores are shared).

    python bench/sandbox_overhead.py                  # markdown table
    python bench/sandbox_overhead.py --n 400 --json
"""

from __future__ import annotations

import argparse
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
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from _common import calibrated, calibration, calibration_line, machine_info  # noqa: E402

from coworkenv.sandbox.jobs import JOBS  # noqa: E402
from coworkenv.sandbox.limits import Limits  # noqa: E402
from coworkenv.sandbox.pool import WorkerPool  # noqa: E402
from coworkenv.sandbox.selection import bwrap_usable, get_runtime  # noqa: E402
from coworkenv.validate.jobs import JOB_NAME as VALIDATE  # noqa: E402 - registers the job


def _payloads(job: str, n: int) -> list[str]:
    if job == "echo":
        return [f"payload-{i}" for i in range(n)]
    if job == "exec":
        return ["pass"] * n
    from coworkenv.synth.generate import GenerateRequest, generate

    specs, _ = generate(GenerateRequest(n=n, seed=1))
    return [spec.to_json() for spec in specs]


def _median_time(work: Callable[[], None], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def run(jobs: list[str], runtimes: list[str], n: int, repeats: int) -> dict[str, Any]:
    limits = Limits(wall_s=120, cpu_s=60)
    out: dict[str, Any] = {
        "n": n,
        "repeats": repeats,
        "machine": machine_info(None),
        "calibration": calibration(),
        "runtimes": runtimes,
        "jobs": {},
        "startup_ms": {},
    }
    for name in runtimes:
        runtime = get_runtime(name)
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            with WorkerPool(workers=1, runtime=runtime, limits=limits, warm=[VALIDATE]):
                times.append(time.perf_counter() - start)
        out["startup_ms"][name] = statistics.median(times) * 1e3  # start + warm up (battery imports) + stop
    for job in jobs:
        payloads = _payloads(job, n)
        fn = JOBS.get(job).fn
        row: dict[str, Any] = {}
        if job == "exec":  # in-process "exec" has no fork: compare with exec() in this process
            code = compile("pass", "<task>", "exec")

            def in_process(code: Any = code, payloads: list[str] = payloads) -> None:
                for _ in payloads:
                    exec(code, {"__name__": "__main__"})  # noqa: S102
        else:

            def in_process(fn: Any = fn, payloads: list[str] = payloads) -> None:
                for payload in payloads:
                    fn(payload)

        in_process()  # warm-up (imports)
        row["in-process"] = {"s": _median_time(in_process, repeats)}
        for name in runtimes:
            runtime = get_runtime(name)
            for workers in (1, 2):
                with WorkerPool(workers=workers, runtime=runtime, limits=limits, warm=[job]) as pool:
                    pool.map(job, payloads[: max(4, n // 10)])  # warm-up
                    results: list[Any] = []

                    def pooled(
                        pool: WorkerPool = pool,
                        job: str = job,
                        payloads: list[str] = payloads,
                        results: list[Any] = results,
                    ) -> None:
                        results.append(pool.map(job, payloads))

                    seconds = _median_time(pooled, repeats)
                    bad = [r for r in results[-1] if not r.ok]
                    if bad:
                        raise SystemExit(f"{job} failed in the {name} pool: {bad[0]}")
                row[f"{name} x{workers}"] = {"s": seconds}
        base = row["in-process"]["s"]
        for key, value in row.items():
            value["tasks_per_s"] = n / value["s"]
            value["tasks_per_s_per_1k_calib"] = calibrated(value["tasks_per_s"], out["calibration"])
            if key.endswith("x1"):
                value["overhead_us_per_task"] = (value["s"] - base) / n * 1e6
        out["jobs"][job] = row
    return out


def markdown(result: dict[str, Any]) -> str:
    lines = [
        f"n = {result['n']} tasks per job, median of {result['repeats']}; "
        f"{result['machine']['cpu']}, {result['machine']['logical_cpus']} logical CPUs",
        calibration_line(result["calibration"]),
        "",
        "| job | mode | tasks/s | tasks/s per 1k calib | overhead per task (1 worker) |",
        "|---|---|---:|---:|---:|",
    ]
    for job, row in result["jobs"].items():
        for mode, value in row.items():
            if mode.endswith("x1"):
                continue
            overhead = ""
            one = row.get(mode.replace("x2", "x1"))
            if mode.endswith("x2") and one is not None:
                overhead = f"{one['overhead_us_per_task']:,.0f} µs ({one['tasks_per_s']:,.0f} tasks/s with 1)"
            label = mode.replace("x2", "(2 workers)")
            lines.append(
                f"| {job} | {label} | {value['tasks_per_s']:,.0f} | {value['tasks_per_s_per_1k_calib']:.2f} | {overhead} |"
            )
    lines += ["", "Starting one sandboxed worker (spawn + warm-up imports + stop): "]
    lines[-1] += ", ".join(f"{name} {ms:,.0f} ms" for name, ms in result["startup_ms"].items())
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=200, help="tasks per job (default 200)")
    parser.add_argument("--repeats", type=int, default=3, help="timed repeats per measurement (median reported)")
    parser.add_argument(
        "--jobs", default="echo,exec,validate", help="comma-separated jobs (default echo,exec,validate)"
    )
    parser.add_argument(
        "--runtimes", default="", help="comma-separated runtimes (default: bwrap when usable, and rlimit)"
    )
    parser.add_argument("--json", action="store_true", help="print the result as JSON instead of a markdown table")
    args = parser.parse_args(argv)
    runtimes = [r for r in args.runtimes.split(",") if r] or (["bwrap"] if bwrap_usable()[0] else []) + ["rlimit"]
    result = run([j for j in args.jobs.split(",") if j], runtimes, args.n, args.repeats)
    print(json.dumps(result, indent=2) if args.json else markdown(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
