"""Throughput of grading by replay: oracle trajectories replayed on a fresh workspace and graded, on one core.

Method: run the oracle once per task to record its trajectory (not timed); then, in this single process
(pinned to one CPU where the OS allows), time `rounds` passes over all tasks of `grade_trajectory(spec,
trajectory)` — replay every tool call against a fresh workspace built from the spec, then evaluate the checks
and the score — after `warmup` untimed passes, `repeats` times, and report the median (and min/max) rate.
A second mode also validates the trajectory from its JSON-ready dict each time, as a pipeline reading
trajectories from Parquet would. Every replayed oracle must score 1.0, or the run fails.

    python bench/episode_throughput.py                      # examples/tasks, markdown table
    python bench/episode_throughput.py --json               # machine-readable
    python bench/episode_throughput.py path/to/tasks --rounds 100 --repeats 7
    python bench/episode_throughput.py --phases             # also: where an episode's time goes

`--phases` times the parts of replay+grade on their own, interleaved like the modes, and gives each in CPU µs per
episode: the tool calls alone (the trajectory's calls on a fresh `Episode`), the whole replay (messages, calls,
the evidence), the checks (`score._outcomes` on a replayed evidence), the rest of `grade` (prohibited rules,
robustness, the `Grade` model: grade minus checks), and the evidence hash a stored rollout adds (replay and hash
minus replay).
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
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # runnable from a checkout without `pip install -e .`
    sys.path.insert(0, str(REPO))

from _common import calibrated, calibration, calibration_line, display_path, machine_info, pin_to_one_core, time_modes  # noqa: E402  (bench/ is on sys.path when run)

from coworkenv.agents import make_policy  # noqa: E402
from coworkenv.episode.episode import Episode  # noqa: E402
from coworkenv.episode.runner import run_episode  # noqa: E402
from coworkenv.episode.trajectory import Trajectory, replay  # noqa: E402
from coworkenv.grading.score import _outcomes, grade, grade_trajectory  # noqa: E402
from coworkenv.spec.io import load_tasks  # noqa: E402
from coworkenv.spec.task import TaskSpec  # noqa: E402

DEFAULT_TASKS = REPO / "examples" / "tasks"
TARGET_EPISODES_PER_S = 2000


def oracle_trajectories(tasks: list[TaskSpec]) -> list[tuple[TaskSpec, Trajectory, int]]:
    """(spec, oracle trajectory, number of tool calls it replays) per task; fails if an oracle is not 1.0."""
    out = []
    for spec in tasks:
        trajectory, evidence = run_episode(spec, make_policy("oracle", spec))
        score = grade_trajectory(spec, trajectory).score
        if score != 1.0:
            raise SystemExit(
                f"{spec.id}: the replayed oracle scores {score}, not 1.0; fix the task before benchmarking"
            )
        out.append((spec, trajectory, len(evidence.calls)))
    return out


def phases(pairs: list[tuple[TaskSpec, Trajectory, int]], rounds: int, warmup: int, repeats: int) -> dict[str, float]:
    """CPU µs per episode of each part of replay+grade (see the module's docstring)."""
    calls = [
        (spec, [(c.function.name, c.function.arguments) for m in traj.messages for c in m.tool_calls or ()])
        for spec, traj, _ in pairs
    ]
    evidences = [(spec, replay(spec, traj)) for spec, traj, _ in pairs]

    def tool_calls() -> None:
        for spec, made in calls:
            episode = Episode(spec)
            for name, arguments in made:
                episode.step(name, arguments)

    def replays() -> None:
        for spec, traj, _ in pairs:
            replay(spec, traj)

    def replays_hashed() -> None:
        for spec, traj, _ in pairs:
            _ = replay(spec, traj).evidence_hash

    def checks() -> None:
        for spec, evidence in evidences:
            _outcomes(spec, evidence)

    def grades() -> None:
        for spec, evidence in evidences:
            grade(spec, evidence)

    modes = {
        "tool calls": tool_calls,
        "replay": replays,
        "replay+hash": replays_hashed,
        "checks": checks,
        "grade": grades,
    }
    _, cpu = time_modes(modes, rounds, warmup, repeats)
    us = {name: statistics.median(values) / len(pairs) * 1e6 for name, values in cpu.items()}
    return {
        "tool calls": us["tool calls"],
        "rest of replay": us["replay"] - us["tool calls"],
        "checks": us["checks"],
        "rest of grade": us["grade"] - us["checks"],
        "replay+grade": us["replay"] + us["grade"],
        "evidence hash (when stored)": us["replay+hash"] - us["replay"],
    }


def run(
    tasks_path: Path, rounds: int, warmup: int, repeats: int, per_task: bool, with_phases: bool = False
) -> dict[str, Any]:
    pinned = pin_to_one_core()
    tasks = load_tasks(tasks_path)
    pairs = oracle_trajectories(tasks)
    n_tasks = len(pairs)
    n_calls = sum(calls for _, _, calls in pairs)
    dicts = [(spec, traj.to_dict()) for spec, traj, _ in pairs]

    def replay_grade() -> None:
        for spec, traj, _ in pairs:
            grade_trajectory(spec, traj)

    def parse_replay_grade() -> None:
        for spec, data in dicts:
            grade_trajectory(spec, Trajectory.model_validate(data))

    calib = calibration()
    timings, cpu_timings = time_modes(
        {"replay+grade": replay_grade, "parse+replay+grade": parse_replay_grade}, rounds, warmup, repeats
    )
    modes = {}
    for name, per_round in timings.items():
        rates = sorted(n_tasks / s for s in per_round)
        median_round = statistics.median(per_round)
        median_cpu = statistics.median(cpu_timings[name])
        modes[name] = {
            "episodes_per_s": n_tasks / median_round,
            "episodes_per_s_min": rates[0],
            "episodes_per_s_max": rates[-1],
            "tool_calls_per_s": n_calls / median_round,
            "us_per_episode": median_round / n_tasks * 1e6,
            "episodes_per_cpu_s": n_tasks / median_cpu if median_cpu > 0 else None,
            # CPU time against CPU time: the calibration is CPU-timed, so a busy machine moves neither.
            "episodes_per_cpu_s_per_1k_calib": calibrated(n_tasks / median_cpu, calib) if median_cpu > 0 else None,
            "repeats_s_per_round": per_round,
            "repeats_cpu_s_per_round": cpu_timings[name],
        }

    tasks_out = []
    if per_task:
        for spec, traj, calls in pairs:
            per_round, _ = time_modes(
                {spec.id: lambda s=spec, t=traj: grade_trajectory(s, t)}, max(rounds, 50), warmup, repeats
            )
            median = statistics.median(per_round[spec.id])
            tasks_out.append(
                {"task_id": spec.id, "tool_calls": calls, "us_per_episode": median * 1e6, "episodes_per_s": 1 / median}
            )

    parts = phases(pairs, rounds, warmup, repeats) if with_phases else {}
    headline = modes["replay+grade"]["episodes_per_s"]
    return {
        "benchmark": "episode_throughput",
        "tasks_path": display_path(tasks_path),
        "tasks": n_tasks,
        "tool_calls_per_pass": n_calls,
        "rounds": rounds,
        "warmup": warmup,
        "repeats": repeats,
        "machine": machine_info(pinned),
        "calibration": calib,
        "modes": modes,
        "per_task": tasks_out,
        "phases_cpu_us_per_episode": parts,
        "target_episodes_per_s": TARGET_EPISODES_PER_S,
        "meets_target": headline >= TARGET_EPISODES_PER_S,
    }


def markdown(result: dict[str, Any]) -> str:
    m = result["machine"]
    lines = [
        f"Machine: {m['cpu']} ({m['logical_cpus']} logical CPUs, pinned to CPU {m['pinned_cpu']}), "
        f"{m['implementation']} {m['python']}, pydantic {m['pydantic']}, {m['platform']}",
        calibration_line(result["calibration"]),
        f"Workload: {result['tasks']} tasks from `{result['tasks_path']}`, {result['tool_calls_per_pass']} tool calls per pass; "
        f"{result['rounds']} passes x {result['repeats']} repeats after {result['warmup']} warm-up passes, one process, one core.",
        "",
        "| mode | episodes/s (median) | min – max | tool calls/s | µs/episode | episodes per CPU-second | the same, per 1k calib |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, r in result["modes"].items():
        per_cpu = f"{r['episodes_per_cpu_s']:,.0f}" if r["episodes_per_cpu_s"] else "n/a"
        lines.append(
            f"| {name} | {r['episodes_per_s']:,.0f} | {r['episodes_per_s_min']:,.0f} – {r['episodes_per_s_max']:,.0f} "
            f"| {r['tool_calls_per_s']:,.0f} | {r['us_per_episode']:,.0f} | {per_cpu} | {r['episodes_per_cpu_s_per_1k_calib'] or 0:.2f} |"
        )
    if result["per_task"]:
        lines += ["", "| task | tool calls | µs/episode | episodes/s |", "|---|---:|---:|---:|"]
        for t in result["per_task"]:
            lines.append(
                f"| {t['task_id']} | {t['tool_calls']} | {t['us_per_episode']:,.0f} | {t['episodes_per_s']:,.0f} |"
            )
    if result["phases_cpu_us_per_episode"]:
        lines += ["", "| part of an episode | CPU µs per episode |", "|---|---:|"]
        lines += [f"| {name} | {us:,.1f} |" for name, us in result["phases_cpu_us_per_episode"].items()]
    verdict = "meets" if result["meets_target"] else "is BELOW"
    lines += [
        "",
        f"replay+grade {verdict} the target of {result['target_episodes_per_s']:,} graded oracle episodes/s per core.",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "tasks",
        nargs="?",
        type=Path,
        default=DEFAULT_TASKS,
        help="TaskSpec file or directory (default: examples/tasks)",
    )
    parser.add_argument("--rounds", type=int, default=200, help="timed passes over all tasks per repeat (default 200)")
    parser.add_argument("--warmup", type=int, default=20, help="untimed passes before timing (default 20)")
    parser.add_argument("--repeats", type=int, default=7, help="timed repeats; the median is reported (default 7)")
    parser.add_argument("--per-task", action="store_true", help="also time each task on its own")
    parser.add_argument(
        "--phases", action="store_true", help="also time the parts of an episode (tool calls, checks, …)"
    )
    parser.add_argument("--json", action="store_true", help="print the result as JSON instead of a markdown table")
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.repeats < 1 or args.warmup < 0:
        parser.error("--rounds and --repeats must be >= 1, --warmup >= 0")
    if not args.tasks.exists():
        parser.error(f"{args.tasks}: no such file or directory")
    result = run(args.tasks, args.rounds, args.warmup, args.repeats, args.per_task, args.phases)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(markdown(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
