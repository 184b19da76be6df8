"""Cost of the evaluation statistics over a suite of N tasks × k trials (docs/design/evaluation.md, "Evaluation metrics and
reports").

Method: seeded synthetic eval rows (each task passes with its own probability, two capabilities of the taxonomy, a
difficulty 1–5); after one untimed warm-up, `--repeats` timed runs of each of:
- `bootstrap`: one percentile bootstrap of all eight figures over the tasks (`bootstrap_means`, 2,000 resamples);
- `summarize`: the whole summary (overall, 3 groups, 9 capabilities, 5 difficulties: one bootstrap each);
- `compare`: two such runs compared (bootstrap and sign-flip test, overall, per group and per capability).
The median (min, max) wall-clock seconds are reported. No test asserts on timings.

    python bench/eval_metrics.py                     # 500 tasks × 3 trials
    python bench/eval_metrics.py --tasks 2000 --json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
for _p in (REPO, REPO / "bench"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

import numpy as np  # noqa: E402
from _common import calibrated_s, calibration, calibration_line, cpu_model  # noqa: E402

from coworkenv.eval.bootstrap import bootstrap_means, rng_for  # noqa: E402
from coworkenv.eval.compare import compare  # noqa: E402
from coworkenv.eval.metrics import summarize, task_values  # noqa: E402
from coworkenv.eval.per_task import per_task  # noqa: E402
from coworkenv.spec.capabilities import CAPABILITIES  # noqa: E402


def rows(tasks: int, trials: int, seed: int, shift: float = 0.0) -> list[dict]:
    rng = np.random.default_rng(seed)
    caps = CAPABILITIES.names()
    task_rng = np.random.default_rng(0)  # the same tasks in every run; only outcomes differ
    out = []
    for i in range(tasks):
        capabilities = [str(c) for c in task_rng.choice(caps, size=2, replace=False)]
        difficulty, p = int(task_rng.integers(1, 6)), min(1.0, float(task_rng.random()) + shift)
        for j in range(trials):
            score = 1.0 if rng.random() < p else float(rng.random()) * 0.7
            out.append(
                {
                    "task_id": f"t{i:05d}",
                    "trial": j,
                    "capabilities": capabilities,
                    "difficulty": difficulty,
                    "completion": score,
                    "safety": 1.0,
                    "robustness": 1.0,
                    "score": score,
                    "passed": score >= 0.75,
                    "n_violations": 0,
                    "agent": f"agent-{seed}",
                }
            )
    return out


def timed(work, repeats: int) -> dict[str, float]:
    work()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return {"median_s": statistics.median(times), "min_s": min(times), "max_s": max(times)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=500)
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    calib = calibration()
    base, cand = rows(args.tasks, args.trials, 1), rows(args.tasks, args.trials, 2, shift=0.1)
    values = task_values(per_task(base), args.trials)
    results = {
        "bootstrap": timed(
            lambda: bootstrap_means(values, resamples=2000, rng=rng_for(0, "x"), confidence=0.95), args.repeats
        ),
        "summarize": timed(lambda: summarize(base), args.repeats),
        "compare": timed(lambda: compare(base, cand), args.repeats),
    }
    for r in results.values():
        r["median_k_calib"] = calibrated_s(r["median_s"], calib)
    report = {"cpu": cpu_model(), "calibration": calib, "tasks": args.tasks, "trials": args.trials, "results": results}
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"{args.tasks} tasks × {args.trials} trials on {report['cpu']}\n{calibration_line(calib)}\n")
    print("| step | median s | min s | max s | median in k calib |\n|---|---:|---:|---:|---:|")
    for name, r in results.items():
        print(f"| {name} | {r['median_s']:.3f} | {r['min_s']:.3f} | {r['max_s']:.3f} | {r['median_k_calib']:,.0f} |")


if __name__ == "__main__":
    main()
