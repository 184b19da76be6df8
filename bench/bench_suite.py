"""Building `coworkenv-bench` and checking it for contamination against a training release.

Method, in a fresh temporary data root:
- **build**: `build_bench(n)` end to end — plan, generation in the bench split, the battery on every task in the
  sandboxed worker pool (`--runtime`, `--workers`), the release tables and the publication of the benchmark release;
  `repeats` times, each into an empty data root (the median is reported), plus the generation alone for reference;
- **training release**: n ordinary training tasks (run seed 0, the same families), validated in-process and published
  as a task release (untimed);
- **contamination**: `training_tasks` (read through the release reader) and `check_contamination` of the bench
  against them, `repeats` times (median), with the report's counts, the highest similarity LSH found, and the exact
  highest similarity over every pair of instructions (brute force, for comparison).

    python bench/bench_suite.py                 # markdown
    python bench/bench_suite.py --n 300 --json
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

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from _common import calibrated_s, calibration, calibration_line, machine_info  # noqa: E402

from coworkenv.data.build import release_tables  # noqa: E402
from coworkenv.data.publisher import publish_release  # noqa: E402
from coworkenv.eval.contamination import check_contamination, jaccard, shingles, training_tasks  # noqa: E402
from coworkenv.eval.suite import bench_plan, build_bench  # noqa: E402
from coworkenv.synth.generate import GenerateRequest, generate  # noqa: E402
from coworkenv.validate.batch import validate_tasks  # noqa: E402


def run(n: int, repeats: int, workers: int, runtime: str) -> dict[str, Any]:
    calib = calibration()
    builds, generation = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(repeats):
            start = time.perf_counter()
            generate(GenerateRequest(n=n), bench_plan(n), split="bench")
            generation.append(time.perf_counter() - start)
            start = time.perf_counter()
            build = build_bench(n, data_root=Path(tmp) / f"root-{i}", workers=workers, runtime=runtime)
            builds.append(time.perf_counter() - start)
        root = Path(tmp) / "root-0"
        specs, _ = generate(GenerateRequest(n=n, seed=0))
        train = publish_release(
            release_tables(specs, validate_tasks(specs, runtime="none")),
            data_root=root,
            run_id="train-0",
            parent=None,
            config={},
        )
        checks = []
        for _ in range(repeats):
            start = time.perf_counter()
            report = check_contamination(build.suite.tasks, training_tasks(root, [train.release_id]))
            checks.append(time.perf_counter() - start)
        theirs = [shingles(t.instruction) for t in specs]
        exact_max = max(jaccard(shingles(s.instruction), other) for s in build.suite.tasks for other in theirs)
    return {
        "n": n,
        "repeats": repeats,
        "workers": workers,
        "runtime": runtime,
        "machine": machine_info(None),
        "calibration": calib,
        "build_k_calib": calibrated_s(statistics.median(builds), calib),
        "check_k_calib": calibrated_s(statistics.median(checks), calib),
        "build_s": statistics.median(builds),
        "builds_s": builds,
        "generation_s": statistics.median(generation),
        "counts": build.model_dump(exclude={"suite"}) | {"composition": build.suite.composition()},
        "training_tasks": len(specs),
        "check_s": statistics.median(checks),
        "checks_s": checks,
        "report": report.model_dump(exclude={"pairs"}) | {"by_kind": report.by_kind(), "clean": report.clean},
        "exact_max_similarity": exact_max,
    }


def markdown(r: dict[str, Any]) -> str:
    c, rep = r["counts"], r["report"]
    return "\n".join(
        [
            f"Machine: {r['machine']['cpu']} ({r['machine']['logical_cpus']} logical CPUs), Python {r['machine']['python']}; "
            f"{r['workers']} sandbox workers, runtime {r['runtime']}, {r['repeats']} repeats (median).",
            calibration_line(r["calibration"]),
            "",
            "| step | seconds | in k calib |",
            "|---|---:|---:|",
            f"| build the {r['n']}-task bench (plan, generate, battery in the sandbox, publish) | {r['build_s']:.1f} | {r['build_k_calib']:,.0f} |",
            f"| of which generation alone | {r['generation_s']:.2f} | |",
            f"| contamination check vs a {r['training_tasks']}-task training release (read + check) "
            f"| {r['check_s']:.2f} | {r['check_k_calib']:,.0f} |",
            "",
            f"Suite: {c['valid']} valid of {c['generated']} generated (invalid: {c['invalid']}); groups {c['composition']['group']}; "
            f"difficulties {c['composition']['difficulty']}.",
            f"Contamination: clean={rep['clean']}, matches {rep['by_kind']}; highest instruction similarity found by LSH "
            f"{rep['max_similarity']:.3f}, exact highest over all {r['n']}×{r['training_tasks']} pairs {r['exact_max_similarity']:.3f} "
            f"(threshold {rep['threshold']}).",
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--runtime", default="auto")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = run(args.n, args.repeats, args.workers, args.runtime)
    print(json.dumps(result, indent=2) if args.json else markdown(result))


if __name__ == "__main__":
    main()
