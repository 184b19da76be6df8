"""Oracle rollouts through the rollout engine: episodes/s of `run_trials` with the `oracle` agent.

Method: `n` procedural tasks (`generate(GenerateRequest(n, seed=1))`, not timed), then for each mode the whole
`run_trials(specs, "oracle", trials=k, workers=W, runtime=R, store=<fresh file>)` call is timed: pool start-up, the
episodes, grading, the trial records and the trials file (one fsync'd line per trial) included. Modes: the sandboxed
pool under bubblewrap and under the rlimit fallback, runtime `none` with W workers (a forked process pool) and with
one (in this process). Every record must be ok with score 1.0, or the run fails. Modes are interleaved repeat by
repeat; the median (and min/max) is reported. Starting a sandboxed pool (its workers' warm-up imports included) is
timed apart, and "after start-up" is the episodes over the median run time less the median start-up.

    python bench/rollout_engine.py                       # markdown table
    python bench/rollout_engine.py --n 200 --trials 1 --repeats 3 --json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from _common import calibrated, calibration, calibration_line, machine_info  # noqa: E402

from coworkenv.rollout import jobs, run_trials  # noqa: E402, F401  (jobs: registers the `trial` job)
from coworkenv.sandbox.pool import WorkerPool  # noqa: E402
from coworkenv.sandbox.selection import bwrap_usable  # noqa: E402
from coworkenv.synth.generate import GenerateRequest, generate  # noqa: E402


def modes_for(workers: int) -> dict[str, tuple[str, int]]:
    modes = {}
    if bwrap_usable()[0]:
        modes[f"bubblewrap, {workers} workers"] = ("bwrap", workers)
    modes[f"rlimit, {workers} workers"] = ("rlimit", workers)
    modes[f"none (process pool), {workers} workers"] = ("none", workers)
    modes["none (in-process), 1 worker"] = ("none", 1)
    return modes


def startup_s(runtime: str, workers: int) -> float:
    """Seconds to start (and stop) a pool of the `trial` job's workers."""
    start = time.perf_counter()
    with WorkerPool(workers=workers, runtime=runtime, warm=["trial"], jobs=["trial"]):
        pass
    return time.perf_counter() - start


def run(n: int, trials: int, workers: int, repeats: int) -> dict[str, Any]:
    calib = calibration()
    specs, _ = generate(GenerateRequest(n=n, seed=1))
    episodes = len(specs) * trials
    calls = sum(1 for s in specs for step in s.solution if hasattr(step, "tool")) * trials
    modes = modes_for(workers)
    times: dict[str, list[float]] = {name: [] for name in modes}
    with tempfile.TemporaryDirectory() as tmp:
        for repeat in range(repeats):
            for name, (runtime, w) in modes.items():
                store = Path(tmp) / f"{repeat}-{runtime}-{w}.jsonl"
                start = time.perf_counter()
                records = run_trials(specs, "oracle", trials=trials, workers=w, runtime=runtime, store=store)
                times[name].append(time.perf_counter() - start)
                bad = [r for r in records if not r.ok or r.grade.score != 1.0]
                if bad:
                    raise SystemExit(
                        f"{name}: {bad[0].task_id} did not score 1.0 ({bad[0].error or bad[0].grade.score})"
                    )
    results = {}
    for name, per_run in times.items():
        rates = sorted(episodes / s for s in per_run)
        runtime, w = modes[name]
        startup = statistics.median(startup_s(runtime, w) for _ in range(repeats)) if runtime != "none" else 0.0
        results[name] = {
            "median_s": statistics.median(per_run),
            "episodes_per_s": statistics.median(rates),
            "min": rates[0],
            "max": rates[-1],
            "startup_s": startup,
            "after_startup_per_s": episodes / max(1e-9, statistics.median(per_run) - startup),
            "episodes_per_s_per_1k_calib": calibrated(statistics.median(rates), calib),
        }
    return {
        "n_tasks": len(specs),
        "trials": trials,
        "episodes": episodes,
        "oracle_calls": calls,
        "repeats": repeats,
        "load_avg": os.getloadavg(),
        "machine": machine_info(None),
        "calibration": calib,
        "modes": results,
    }


def markdown(out: dict[str, Any]) -> str:
    lines = [
        f"{out['n_tasks']} tasks × {out['trials']} trial(s) = {out['episodes']} episodes ({out['oracle_calls']} oracle calls), "
        f"median of {out['repeats']}; load average {', '.join(f'{x:.1f}' for x in out['load_avg'])}; {out['machine']['cpu']}",
        calibration_line(out["calibration"]),
        "",
        "| mode | run_trials | episodes/s (median) | min – max | episodes/s per 1k calib | pool start-up | episodes/s after start-up |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, m in out["modes"].items():
        startup = f"{m['startup_s']:.2f} s" if m["startup_s"] else "—"
        lines.append(
            f"| {name} | {m['median_s']:.2f} s | **{m['episodes_per_s']:.0f}** | {m['min']:.0f} – {m['max']:.0f} "
            f"| {m['episodes_per_s_per_1k_calib']:.2f} | {startup} "
            f"| {m['after_startup_per_s']:.0f} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200, help="generated tasks")
    parser.add_argument("--trials", type=int, default=1, help="trials per task")
    parser.add_argument("--workers", type=int, default=2, help="workers of the pooled modes")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per mode (median reported)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a markdown table")
    args = parser.parse_args()
    out = run(args.n, args.trials, args.workers, args.repeats)
    print(json.dumps(out, indent=2) if args.json else markdown(out))


if __name__ == "__main__":
    main()
