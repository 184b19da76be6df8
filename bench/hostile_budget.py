"""What hostile tasks cost a batch of good ones in the sandboxed battery, with per-task budgets.

Method: `validate_tasks` (the `validate` stage's function) on N good procedural tasks (`generate(GenerateRequest(n,
seed=1))`) with k hostile tasks dealt in at even intervals, two sandboxed workers, for k = 0, 1 and 10, and for two
kinds of hostile task (`tests/support/hostile.py`):
- `regex`: the issue's regex bomb, `^(a+)+$` against 'a'*40+'!' in a `file_contains` check. With RE2 it is decided
  in microseconds: it costs what a good task costs.
- `slow`: a spec within every cap whose oracle scans a 5,000-message mailbox 495 times (about half a minute of
  battery in-process). No check is slow, the volume is: this is what is left of a hostile task after RE2 and the
  caps, and only the budget stops it.
Each batch runs with the `validate` job's own budget (5 s, or `--budget`); `--unbounded` adds the `slow` k = 1
batch under the pre-budget default (the 60 s wall clock, 30 s of CPU), for comparison. The cost of k hostile tasks is
the batch's wall clock minus the k = 0 batch's; each batch is timed once per repeat, and the median is reported.

    python bench/hostile_budget.py                                  # markdown table, bwrap and rlimit
    python bench/hostile_budget.py --n 1000 --runtimes bwrap --unbounded --json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from _common import calibrated_s, calibration, calibration_line, machine_info  # noqa: E402

from coworkenv.sandbox.limits import Limits  # noqa: E402
from coworkenv.sandbox.selection import bwrap_usable  # noqa: E402
from coworkenv.validate.batch import validate_tasks  # noqa: E402
from coworkenv.validate.jobs import BATTERY_BUDGET_S  # noqa: E402
from tests.support.hostile import hostile_specs, slow_oracle  # noqa: E402

PRE_BUDGET_WALL_S = 60.0
"""`Limits().wall_s`: what bounded a task before budgets (with `Limits().cpu_s` = 30 s of CPU)."""


def _good(n: int) -> list[str]:
    from coworkenv.synth.generate import GenerateRequest, generate

    specs, _ = generate(GenerateRequest(n=n, seed=1))
    return [spec.to_json() for spec in specs]


def _hostile(kind: str) -> str:
    return slow_oracle().text if kind == "slow" else next(h.text for h in hostile_specs() if h.name == "regex-bomb")


def _batch(good: list[str], hostile: str, k: int) -> list[str]:
    out = list(good)
    for i in range(k):  # evenly spread, later ones first so that earlier positions stay right
        out.insert(len(good) * (k - i) // (k + 1), hostile)
    return out


def _run(batch: list[str], runtime: str, budget: float | None, workers: int) -> tuple[float, dict[str, int]]:
    start = time.perf_counter()
    verdicts = validate_tasks(batch, runtime=runtime, workers=workers, budget_s=budget, limits=Limits())
    wall = time.perf_counter() - start
    codes: dict[str, int] = {"valid": sum(v.valid for v in verdicts)}
    for v in verdicts:
        for code in v.failed_codes:
            codes[code] = codes.get(code, 0) + 1
    return wall, codes


def measure(
    n: int, runtimes: list[str], budget: float | None, repeats: int, workers: int, unbounded: bool
) -> dict[str, Any]:
    good = _good(n)
    calib = calibration()
    out: dict[str, Any] = {
        "n": n,
        "workers": workers,
        "budget_s": budget or BATTERY_BUDGET_S,
        "repeats": repeats,
        "machine": machine_info(None),
        "calibration": calib,
        "rows": [],
    }
    cases = [
        ("none", 0, budget),
        ("regex", 1, budget),
        ("regex", 10, budget),
        ("slow", 1, budget),
        ("slow", 10, budget),
    ]
    if unbounded:
        cases.append(("slow", 1, PRE_BUDGET_WALL_S))
    for runtime in runtimes:
        base = None
        for kind, k, case_budget in cases:
            batch = _batch(good, _hostile(kind) if k else "", k)
            walls, codes = [], {}
            for _ in range(repeats):
                wall, codes = _run(batch, runtime, case_budget, workers)
                walls.append(wall)
            wall = statistics.median(walls)
            base = wall if k == 0 else base
            extra = wall - base if base is not None else 0.0
            out["rows"].append(
                {
                    "runtime": runtime,
                    "hostile": kind,
                    "k": k,
                    "budget_s": case_budget or BATTERY_BUDGET_S,
                    "wall_s": round(wall, 2),
                    "extra_s": round(extra, 2),
                    "extra_per_hostile_s": round(extra / k, 2) if k else 0.0,
                    "wall_k_calib": round(calibrated_s(wall, calib), 1),
                    "slowdown": round(wall / base, 2) if base else 1.0,
                    "codes": codes,
                }
            )
            print(f"# {runtime} {kind} k={k} budget={case_budget}: {wall:.1f} s {codes}", file=sys.stderr)
    return out


def markdown(result: dict[str, Any]) -> str:
    lines = [
        f"{result['n']} good tasks, {result['workers']} workers, {result['repeats']} repeat(s); machine: {result['machine']['cpu']}, "
        f"{result['machine']['logical_cpus']} logical CPUs",
        calibration_line(result["calibration"]),
        "",
        "| runtime | hostile | k | budget | batch | batch in k calib | extra | per hostile task | slowdown | verdicts |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in result["rows"]:
        codes = ", ".join(
            f"{c} {n}" for c, n in r["codes"].items() if c in ("valid", "sandbox_timeout", "oracle_scores_1")
        )
        lines.append(
            f"| {r['runtime']} | {r['hostile']} | {r['k']} | {r['budget_s']:g} s | {r['wall_s']:.1f} s | {r['wall_k_calib']:,.0f} "
            f"| {r['extra_s']:+.1f} s | {r['extra_per_hostile_s']:.1f} s | {r['slowdown']:.2f}× | {codes} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000, help="Good tasks per batch.")
    parser.add_argument("--runtimes", default="bwrap,rlimit", help="Comma-separated sandbox runtimes.")
    parser.add_argument(
        "--budget",
        type=float,
        default=None,
        help=f"Per-task budget in seconds (default: the job's, {BATTERY_BUDGET_S:g} s).",
    )
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument(
        "--unbounded", action="store_true", help="Also run one slow hostile task under the pre-budget 60 s wall clock."
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    runtimes = [r for r in args.runtimes.split(",") if r and (r != "bwrap" or bwrap_usable()[0])]
    result = measure(args.n, runtimes, args.budget, args.repeats, args.workers, args.unbounded)
    print(json.dumps(result, indent=2) if args.json else markdown(result))


if __name__ == "__main__":
    main()
