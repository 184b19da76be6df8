"""Speed of this working tree against an older commit, measured in the same run on the same machine.

Method: check the older commit (default 27970e3) out into a scratch git worktree in a temporary directory
(removed at the end, also on failure), start two long-lived worker processes (bench/_versus_worker.py, this
interpreter, each importing CoworkEnv from its own tree only), pinned to the same CPU where the OS allows, and ask
them in turn to time one repeat of one workload, alternating which tree goes first, so that a slow spell of a
shared machine hits both alike:

- **replay+grade**: `grade_trajectory` on the oracle trajectory of every task (recorded untimed in each tree;
  every replayed oracle must score 1.0 in both), `--rounds` passes per repeat;
- **battery**: `validate_spec` on every task, `--battery-rounds` passes per repeat;
- **generate**: build the `--n` planned procedural tasks (families both trees have) and serialize each with
  `TaskSpec.to_json`, one pass per repeat (planning is not timed).

The tasks are the older commit's examples/tasks, loaded by both trees (a file one tree rejects is left out, and
named). Rates are per CPU-second of the worker (its waits for the core on a busy machine left out); the speedup is
the median of the per-repeat ratios new/old. Each worker also measures the calibration (bench/_common.py) twice,
before and after the repeats, and every rate is also given per 1,000 calibration operations of its own worker.

    python bench/versus_commit.py                       # against 27970e3, markdown table
    python bench/versus_commit.py --rev HEAD~10 --repeats 9 --json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

REPO = Path(__file__).resolve().parents[1]
BENCH = Path(__file__).resolve().parent
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

from _common import calibrated, calibration_line, machine_info, merged_calibration  # noqa: E402

WORKER = BENCH / "_versus_worker.py"
DEFAULT_REV = "27970e3"
# The targets: speedup of the working tree over 27970e3.
TARGETS = {"replay+grade": 3.0, "battery": 3.0, "generate": 2.0}
WORKLOADS = {"replay+grade": ("replay", "episodes"), "battery": ("battery", "tasks"), "generate": ("generate", "tasks")}


class BenchError(Exception):
    pass


def git(*args: str) -> str:
    done = subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise BenchError(f"git {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout.strip()


class Worker:
    """A worker process importing CoworkEnv from `tree`; `ask` sends one request and returns its reply."""

    def __init__(self, label: str, tree: Path, cpu: int | None, log: TextIO) -> None:
        self.label = label
        read_fd, write_fd = os.pipe()
        cmd = [sys.executable, str(WORKER), str(tree), "--reply-fd", str(write_fd)]
        if cpu is not None:
            cmd += ["--cpu", str(cpu)]
        env = os.environ | {"PYTHONPATH": str(tree), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
        self.proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=log, stderr=log, pass_fds=(write_fd,), env=env, cwd=tree, text=True
        )
        os.close(write_fd)
        self.replies = os.fdopen(read_fd)

    def ask(self, **request: Any) -> dict[str, Any]:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(json.dumps(request) + "\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            raise BenchError(f"the {self.label} worker has exited (status {self.proc.poll()})") from None
        line = self.replies.readline()
        if not line:
            raise BenchError(
                f"the {self.label} worker exited without answering {request['op']} (status {self.proc.wait()})"
            )
        reply = json.loads(line)
        if not reply.pop("ok"):
            raise BenchError(f"{self.label} tree, {request['op']}: {reply['error']}")
        return reply

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.replies.close()


def compare(
    workers: dict[str, Worker], tasks: Path, n: int, seed: int, repeats: int, rounds: dict[str, int]
) -> dict[str, Any]:
    probes = {label: w.ask(op="probe", tasks=str(tasks)) for label, w in workers.items()}
    files = sorted(set(probes["old"]["loads"]) & set(probes["new"]["loads"]))
    if not files:
        raise BenchError(
            f"no task file of {tasks} loads in both trees: {probes['old']['rejects']} / {probes['new']['rejects']}"
        )
    # The error names the file by its scratch path; the file name is the key already.
    skipped = {
        label: {f: e.replace(f"{tasks / f}: ", "") for f, e in p["rejects"].items()}
        for label, p in probes.items()
        if p["rejects"]
    }
    families = sorted(set(probes["old"]["families"]) & set(probes["new"]["families"]))
    setup = {
        label: w.ask(op="setup", files=[str(tasks / f) for f in files], n=n, seed=seed, families=families)
        for label, w in workers.items()
    }
    calibs: dict[str, list[dict[str, Any]]] = {label: [] for label in workers}
    order = list(workers)
    for label in order:
        calibs[label].append(workers[label].ask(op="calibration"))
    samples: dict[str, dict[str, list[dict[str, Any]]]] = {w: {label: [] for label in workers} for w in WORKLOADS}
    for repeat in range(repeats):
        for name, (op, _) in WORKLOADS.items():
            for label in order if repeat % 2 == 0 else order[::-1]:
                samples[name][label].append(workers[label].ask(op="time", workload=op, rounds=rounds[name]))
    for label in order[::-1]:
        calibs[label].append(workers[label].ask(op="calibration"))
    calib = {label: merged_calibration(runs) for label, runs in calibs.items()}

    results = {}
    for name, (_, unit) in WORKLOADS.items():
        out: dict[str, Any] = {
            "unit": unit,
            "items_per_repeat": samples[name]["new"][0]["items"],
            "target_speedup": TARGETS[name],
        }
        for label in order:
            cpu_rates = sorted(s["items"] / s["cpu_s"] for s in samples[name][label])
            wall_rates = sorted(s["items"] / s["wall_s"] for s in samples[name][label])
            out[label] = {
                "per_cpu_s": statistics.median(cpu_rates),
                "per_cpu_s_min": cpu_rates[0],
                "per_cpu_s_max": cpu_rates[-1],
                "per_wall_s": statistics.median(wall_rates),
                "per_1k_calib": calibrated(statistics.median(cpu_rates), calib[label]),
                "repeats": samples[name][label],
            }
        pairs = list(zip(samples[name]["old"], samples[name]["new"], strict=True))
        ratios = sorted((n_["items"] / n_["cpu_s"]) / (o["items"] / o["cpu_s"]) for o, n_ in pairs)
        wall_ratios = [(n_["items"] / n_["wall_s"]) / (o["items"] / o["wall_s"]) for o, n_ in pairs]
        out |= {
            "speedup": statistics.median(ratios),
            "speedup_min": ratios[0],
            "speedup_max": ratios[-1],
            "speedup_wall": statistics.median(wall_ratios),
        }
        out["meets_target"] = out["speedup"] >= TARGETS[name]
        results[name] = out
    return {
        "task_files": files,
        "skipped_task_files": skipped,
        "families": families,
        "setup": setup,
        "calibration": calib,
        "workloads": results,
    }


@contextmanager
def two_trees(rev: str, cpu: int | None, prefix: str) -> Iterator[tuple[str, dict[str, Worker], Path]]:
    """(the older commit, a worker per tree — "old" in a scratch worktree of `rev`, "new" in this checkout — and the
    old tree's path). The worktree is removed on the way out, also on failure; a BenchError raised inside carries
    the workers' last output."""
    old_commit = git("rev-parse", "--verify", f"{rev}^{{commit}}")
    with tempfile.TemporaryDirectory(prefix=prefix) as scratch:
        old_tree = Path(scratch) / "old"
        git("worktree", "add", "--detach", str(old_tree), old_commit)
        workers: dict[str, Worker] = {}
        log = open(Path(scratch) / "workers.log", "w+")  # noqa: SIM115  (read back on failure, closed below)
        try:
            workers["old"] = Worker("old", old_tree, cpu, log)
            workers["new"] = Worker("new", REPO, cpu, log)
            yield old_commit, workers, old_tree
        except BenchError as exc:
            log.flush()
            log.seek(0)
            tail = log.read()[-3000:]
            raise BenchError(f"{exc}\n--- worker output ---\n{tail}" if tail.strip() else str(exc)) from None
        finally:
            for worker in workers.values():
                worker.close()
            log.close()
            subprocess.run(
                ["git", "-C", str(REPO), "worktree", "remove", "--force", str(old_tree)], capture_output=True
            )
            subprocess.run(["git", "-C", str(REPO), "worktree", "prune"], capture_output=True)


def working_tree() -> dict[str, Any]:
    """The "new" side: this checkout's commit, and whether tracked files differ from it."""
    return {
        "commit": git("rev-parse", "HEAD"),
        "uncommitted_changes": bool(git("status", "--porcelain", "--untracked-files=no")),
    }


def working_tree_label(new: dict[str, Any]) -> str:
    return new["commit"][:10] + (" plus uncommitted changes" if new["uncommitted_changes"] else "")


def run(rev: str, n: int, seed: int, repeats: int, rounds: dict[str, int], tasks: str | None) -> dict[str, Any]:
    new = working_tree()
    cpu = min(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    with two_trees(rev, cpu, "coworkenv-versus-") as (old_commit, workers, old_tree):
        task_dir = Path(tasks).resolve() if tasks else old_tree / "examples" / "tasks"
        result = compare(workers, task_dir, n, seed, repeats, rounds)
    return {
        "benchmark": "versus_commit",
        "old": {"rev": rev, "commit": old_commit},
        "new": new,
        "tasks": tasks or f"examples/tasks at {rev}",
        "n": n,
        "seed": seed,
        "repeats": repeats,
        "rounds": rounds,
        "machine": machine_info(cpu),
    } | result


def markdown(r: dict[str, Any]) -> str:
    m = r["machine"]
    new = working_tree_label(r["new"])
    lines = [
        f"Machine: {m['cpu']} ({m['logical_cpus']} logical CPUs, both workers pinned to CPU {m['pinned_cpu']}), "
        f"{m['implementation']} {m['python']}, pydantic {m['pydantic']}, {m['platform']}",
        f"Old: {r['old']['rev']} ({r['old']['commit'][:10]}); new: the working tree at {new}. "
        f"Tasks: {len(r['task_files'])} files of {r['tasks']}; generate: {r['n']} tasks over {len(r['families'])} families; "
        f"{r['repeats']} interleaved repeats (rounds per repeat: {', '.join(f'{k} {v}' for k, v in r['rounds'].items())}).",
    ]
    for label, rejects in r["skipped_task_files"].items():
        lines.append(
            f"Left out (the {label} tree rejects them): " + "; ".join(f"{f}: {e[:100]}…" for f, e in rejects.items())
        )
    for label in ("old", "new"):
        s = r["setup"][label]
        lines.append(
            f"{label} tree: {s['tasks']} tasks, {s['battery_valid']} valid by the battery, {s['generated']} of {r['n']} generated"
        )
    for label in ("old", "new"):
        lines.append(f"{label} worker — " + calibration_line(r["calibration"][label]))
    lines += [
        "",
        "| workload | old /CPU-s (median, min – max) | new /CPU-s (median, min – max) | speedup new/old (median, min – max) "
        "| wall-clock speedup | old per 1k calib | new per 1k calib | target |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, w in r["workloads"].items():
        o, n = w["old"], w["new"]
        verdict = "met" if w["meets_target"] else "NOT met"
        lines.append(
            f"| {name} ({w['unit']}) | {o['per_cpu_s']:,.0f} ({o['per_cpu_s_min']:,.0f} – {o['per_cpu_s_max']:,.0f}) "
            f"| {n['per_cpu_s']:,.0f} ({n['per_cpu_s_min']:,.0f} – {n['per_cpu_s_max']:,.0f}) "
            f"| {w['speedup']:.2f}x ({w['speedup_min']:.2f} – {w['speedup_max']:.2f}) | {w['speedup_wall']:.2f}x "
            f"| {o['per_1k_calib']:.2f} | {n['per_1k_calib']:.2f} | ≥ {w['target_speedup']:g}x: {verdict} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rev", default=DEFAULT_REV, help=f"the older commit (default {DEFAULT_REV})")
    parser.add_argument(
        "--repeats", type=int, default=7, help="interleaved timed repeats per workload and tree (default 7)"
    )
    parser.add_argument(
        "--rounds", type=int, default=20, help="replay+grade passes over the tasks per repeat (default 20)"
    )
    parser.add_argument(
        "--battery-rounds", type=int, default=2, help="battery passes over the tasks per repeat (default 2)"
    )
    parser.add_argument("--n", type=int, default=500, help="procedural tasks built per generate repeat (default 500)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--tasks", help="task directory to use instead of the older commit's examples/tasks")
    parser.add_argument("--json", action="store_true", help="print JSON instead of markdown")
    args = parser.parse_args(argv)
    if min(args.repeats, args.rounds, args.battery_rounds, args.n) < 1:
        parser.error("--repeats, --rounds, --battery-rounds and --n must be >= 1")
    rounds = {"replay+grade": args.rounds, "battery": args.battery_rounds, "generate": 1}
    try:
        result = run(args.rev, args.n, args.seed, args.repeats, rounds, args.tasks)
    except BenchError as exc:
        print(f"versus_commit: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(result, indent=2) if args.json else markdown(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
