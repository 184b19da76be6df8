"""Throughput of procedural task generation, alone and together with the grading-consistency gate, on one core.

Method: plan N tasks over every family (cold start: uniform over capabilities × difficulties), then time, in
this single process pinned to one CPU,
- **generate**: build every task of the plan (draft → TaskSpec validation);
- **generate+gate**: build every task and run the consistency gate on it (oracle episode, empty episode and one
  oracle-plus-violation episode per prohibited rule, each graded);
after an untimed warm-up, `repeats` times, interleaved, reporting the median rate. Every gated task must pass
or the run fails.

    python bench/synth_throughput.py                 # markdown table
    python bench/synth_throughput.py --n 2000 --json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from _common import calibrated, calibration, calibration_line, machine_info, pin_to_one_core, time_modes  # noqa: E402

from coworkenv.grading.consistency import consistency_gate  # noqa: E402
from coworkenv.synth.family import load_families  # noqa: E402
from coworkenv.synth.generate import GenerateRequest, plan_for, procedural_tasks  # noqa: E402

TARGETS = {"generate": 1000, "generate+gate": 300}


def run(n: int, seed: int, warmup: int, repeats: int) -> dict[str, Any]:
    pinned = pin_to_one_core()
    plan = plan_for(GenerateRequest(n=n, seed=seed))

    def generate() -> None:
        for item in procedural_tasks(plan.rows):
            if not hasattr(item, "solution"):
                raise SystemExit(f"rejected: {item}")

    def generate_and_gate() -> None:
        for spec in procedural_tasks(plan.rows):
            if not consistency_gate(spec).passed:
                raise SystemExit(f"{spec.id} fails the consistency gate")

    calib = calibration()
    timings, cpu = time_modes(
        {"generate": generate, "generate+gate": generate_and_gate}, rounds=1, warmup=warmup, repeats=repeats
    )
    modes = {}
    for name, per_round in timings.items():
        modes[name] = {
            "tasks_per_s": n / statistics.median(per_round),
            "min_tasks_per_s": n / max(per_round),
            "max_tasks_per_s": n / min(per_round),
            "tasks_per_cpu_s": n / statistics.median(cpu[name]),
            "tasks_per_cpu_s_per_1k_calib": calibrated(
                n / statistics.median(cpu[name]), calib
            ),  # CPU time against CPU time
            "target": TARGETS[name],
        }
    return {
        "n": n,
        "families": len(load_families()),
        "repeats": repeats,
        "machine": machine_info(pinned),
        "calibration": calib,
        "modes": modes,
    }


def markdown(result: dict[str, Any]) -> str:
    m = result["machine"]
    lines = [
        f"Machine: {m['cpu']} ({m['logical_cpus']} logical CPUs, pinned to CPU {m['pinned_cpu']}), Python {m['python']}",
        calibration_line(result["calibration"]),
        f"Workload: {result['n']} tasks over {result['families']} families, {result['repeats']} repeats, one process, one core.",
        "",
        "| mode | tasks/s (median) | min – max | tasks per CPU-second | the same, per 1k calib | target |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, r in result["modes"].items():
        lines.append(
            f"| {name} | {r['tasks_per_s']:,.0f} | {r['min_tasks_per_s']:,.0f} – {r['max_tasks_per_s']:,.0f} | "
            f"{r['tasks_per_cpu_s']:,.0f} | {r['tasks_per_cpu_s_per_1k_calib']:.2f} | ≥ {r['target']:,} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000, help="tasks per repeat")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", action="store_true", help="print JSON instead of markdown")
    args = parser.parse_args(argv)
    result = run(args.n, args.seed, args.warmup, args.repeats)
    print(json.dumps(result, indent=2) if args.json else markdown(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
