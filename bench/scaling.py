"""Scaling of the pipeline's commands with the number of tasks: time, tasks/s and peak memory of the documented CLI.

Method: in a fresh data root, run `coworkenv generate --n N --seed 1 --run-id sN` for every N of
`--generate-sizes`, and on the runs of every N of `--validate-sizes` the stages after it, one command at a time, as
a user would: `validate`, `rollout` (the oracle rollouts the release gate requires), `build`, `gate`, `publish`.
Each command is its own process, started from this checkout by the same interpreter, through a small in-process
wrapper that calls the `coworkenv` entry point and, at exit, writes `getrusage` of itself and of its children.
Per command:

- **seconds**: wall clock of the command process, start to exit; **tasks/s** = N / seconds;
- **parent MB**: peak RSS of the command process itself (`RUSAGE_SELF` ru_maxrss, exact);
- **workers MB**: peak of the *sum* of the RSS of all its descendants alive at once (sandboxed workers, bubblewrap,
  helpers), sampled from /proc every `--poll-s` seconds (a peak shorter than that can be missed);
  **largest worker MB**: the largest high-water mark (VmHWM) of a single descendant, exact for every descendant
  that lived through at least one sample;
- CPU seconds of the command (`RUSAGE_SELF`, exact) and of its descendants (each one's CPU time when last sampled:
  a lower bound, short of at most one interval per descendant).

The calibration (bench/_common.py) is measured before and after, in this process, and each rate is also given
per 1,000 calibration operations. The data root is a temporary directory, removed at the end unless `--keep`.

    python bench/scaling.py                                             # full sizes: 1k..1M generate, 1k..100k stages
    python bench/scaling.py --generate-sizes 1000,3000 --validate-sizes 500 --json
    python bench/scaling.py --commands generate,validate --runtime rlimit --workers 2
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
BENCH = Path(__file__).resolve().parent
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

from _common import calibrated, calibration, calibration_line, machine_info, merged_calibration  # noqa: E402

from coworkenv.pipeline.synthesis import SYNTHESIS  # noqa: E402

STAGES = tuple(s for s in SYNTHESIS.names()[2:] if s != "repair")  # procedural tasks leave nothing to repair
COMMANDS = ("generate", *STAGES)
HAS_PROC = Path("/proc/self/status").exists()
TICKS = os.sysconf("SC_CLK_TCK") if HAS_PROC else 100
RUSAGE_ENV = "COWORKENV_BENCH_RUSAGE"
GENERATE_SIZES = "1000,10000,100000,1000000"
STAGE_SIZES = "1000,10000,100000"

# The command process: the `coworkenv` console script's entry point, plus an exit hook (atexit runs on sys.exit, the
# CLI's way out) that records the process's own getrusage. Its children's are not taken from RUSAGE_CHILDREN: a
# sandboxed worker killed under bubblewrap is reaped inside its PID namespace, never by this process.
WRAPPER = f"""
import atexit, json, os, resource, sys
_out = os.environ.pop({RUSAGE_ENV!r})
def _report():
    s = resource.getrusage(resource.RUSAGE_SELF)
    with open(_out, "w") as f:
        json.dump({{"self_maxrss_kb": s.ru_maxrss, "self_cpu_s": s.ru_utime + s.ru_stime}}, f)
atexit.register(_report)
sys.argv[0] = "coworkenv"
from coworkenv.cli import main
sys.exit(main())
"""


def _children_map() -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(b")") + 2 :].split()[1])  # the name may hold spaces and parentheses
        children.setdefault(ppid, []).append(int(entry.name))
    return children


class Descendants:
    """Samples the live descendants of one process from /proc: the peak of the sum of their RSS, each one's own
    high-water mark (VmHWM, exact for a process sampled at least once) and its CPU seconds when last seen."""

    def __init__(self, root: int) -> None:
        self.root = root
        self.peak_sum = 0
        self.hwm: dict[int, int] = {}
        self.cpu: dict[int, float] = {}

    def sample(self) -> None:
        children = _children_map()
        total, stack = 0, list(children.get(self.root, []))
        while stack:
            pid = stack.pop()
            stack.extend(children.get(pid, []))
            try:
                with open(f"/proc/{pid}/status") as f:
                    fields = dict(line.split(":", 1) for line in f if ":" in line)
                with open(f"/proc/{pid}/stat", "rb") as f:
                    stat = f.read()
            except OSError:
                continue
            if "VmRSS" not in fields:  # a zombie, or a kernel thread
                continue
            total += int(fields["VmRSS"].split()[0]) * 1024
            self.hwm[pid] = max(self.hwm.get(pid, 0), int(fields["VmHWM"].split()[0]) * 1024)
            utime, stime = stat[stat.rindex(b")") + 2 :].split()[11:13]
            self.cpu[pid] = (int(utime) + int(stime)) / TICKS
        self.peak_sum = max(self.peak_sum, total)


def run_command(args: list[str], data_root: Path, poll_s: float) -> dict[str, Any]:
    """Run `coworkenv ARGS --data-root DATA_ROOT`; wall time, exit status, peak memory and CPU as described above."""
    rusage_file = data_root / ".rusage.json"
    rusage_file.unlink(missing_ok=True)
    env = os.environ | {
        RUSAGE_ENV: str(rusage_file),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    }
    cmd = [sys.executable, "-c", WRAPPER, *args, "--data-root", str(data_root)]
    start, sampler_start = time.perf_counter(), time.process_time()
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    output: list[str] = []
    reader = threading.Thread(target=lambda: output.extend(proc.stdout or []), daemon=True)
    reader.start()
    workers = Descendants(proc.pid) if HAS_PROC else None
    while proc.poll() is None:
        if workers is not None:
            workers.sample()
        time.sleep(poll_s)
    seconds, sampler_cpu = time.perf_counter() - start, time.process_time() - sampler_start
    reader.join()
    usage = json.loads(rusage_file.read_text()) if rusage_file.exists() else None
    return {
        "seconds": seconds,
        "returncode": proc.returncode,
        "parent_peak_rss_mb": usage["self_maxrss_kb"] / 1024 if usage else None,
        "parent_cpu_s": usage["self_cpu_s"] if usage else None,
        "workers_seen": len(workers.hwm) if workers else None,
        "workers_peak_rss_mb": workers.peak_sum / 2**20 if workers else None,
        "largest_worker_rss_mb": max(workers.hwm.values(), default=0) / 2**20 if workers else None,
        "workers_cpu_s": sum(workers.cpu.values()) if workers else None,
        "sampler_cpu_s": sampler_cpu,  # this process's own cost of sampling, taken from the same cores
        "output_tail": "".join(output)[-2000:],
    }


def run(
    generate_sizes: list[int],
    validate_sizes: list[int],
    commands: list[str],
    options: dict[str, Any],
    data_root: Path,
    poll_s: float,
) -> dict[str, Any]:
    calibs = [calibration()]
    rows: list[dict[str, Any]] = []
    # A stage size needs a generated run of that size: it is generated (and reported) as well.
    sizes = sorted(set(generate_sizes) | set(validate_sizes))
    generate_options = [f"--{k.replace('_', '-')}={v}" for k, v in options.items() if v is not None]
    for n in sizes:
        run_id = f"s{n}"
        todo = [("generate", ["generate", "--n", str(n), "--seed", "1", "--run-id", run_id, *generate_options])]
        if n in validate_sizes:
            todo += [(c, [c, "--run-id", run_id]) for c in STAGES if c in commands]
        for name, args in todo:
            if name == "generate" and "generate" not in commands and n not in validate_sizes:
                continue
            print(f"scaling: coworkenv {' '.join(args)}", file=sys.stderr, flush=True)
            row = {"command": name, "n": n} | run_command(args, data_root, poll_s)
            row["tasks_per_s"] = n / row["seconds"]
            rows.append(row)
            if row["returncode"] != 0:
                print(
                    f"scaling: {name} at n={n} exited with status {row['returncode']}:\n{row['output_tail']}",
                    file=sys.stderr,
                )
                break  # the later stages need this one
    calibs.append(calibration())
    calib = merged_calibration(calibs)
    for row in rows:
        row["tasks_per_s_per_1k_calib"] = calibrated(row["tasks_per_s"], calib)
    return {
        "benchmark": "scaling",
        "generate_sizes": generate_sizes,
        "validate_sizes": validate_sizes,
        "commands": commands,
        "options": options,
        "poll_s": poll_s,
        "machine": machine_info(None) | {"memory_gb": memory_gb()},
        "calibration": calib,
        "rows": rows,
        "summary": summary(rows),
    }


def memory_gb() -> float | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    except (ValueError, OSError, AttributeError):
        return None


def summary(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per command, smallest against largest n: growth of the time per task and of the parent's peak memory
    (1.0 = linear time, flat memory)."""
    out = {}
    for command in COMMANDS:
        ok = sorted((r for r in rows if r["command"] == command and r["returncode"] == 0), key=lambda r: r["n"])
        if len(ok) < 2:
            continue
        small, large = ok[0], ok[-1]
        per_task = (large["seconds"] / large["n"]) / (small["seconds"] / small["n"])
        memory = (
            large["parent_peak_rss_mb"] / small["parent_peak_rss_mb"]
            if small["parent_peak_rss_mb"] and large["parent_peak_rss_mb"]
            else None
        )
        out[command] = {
            "from_n": small["n"],
            "to_n": large["n"],
            "time_per_task_growth": per_task,
            "parent_memory_growth": memory,
        }
    return out


def fmt(value: float | None, spec: str = ",.0f") -> str:
    return "n/a" if value is None else format(value, spec)


def markdown(r: dict[str, Any]) -> str:
    m = r["machine"]
    opts = ", ".join(f"{k} {v}" for k, v in r["options"].items() if v is not None) or "the CLI's defaults"
    lines = [
        f"Machine: {m['cpu']} ({m['logical_cpus']} logical CPUs, {fmt(m['memory_gb'], '.0f')} GB), {m['implementation']} {m['python']}, "
        f"pydantic {m['pydantic']}, {m['platform']}",
        calibration_line(r["calibration"]),
        f"Run settings (given to `coworkenv generate`): {opts}; workers' memory sampled every {r['poll_s']} s.",
        "",
        "| command | n | seconds | tasks/s | tasks/s per 1k calib | peak RSS parent MB | peak RSS workers MB (sum) "
        "| largest worker MB | CPU s parent | CPU s workers | exit |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in r["rows"]:
        lines.append(
            f"| {row['command']} | {row['n']:,} | {row['seconds']:,.1f} | {row['tasks_per_s']:,.0f} | {row['tasks_per_s_per_1k_calib']:.2f} "
            f"| {fmt(row['parent_peak_rss_mb'])} | {fmt(row['workers_peak_rss_mb'])} | {fmt(row['largest_worker_rss_mb'])} "
            f"| {fmt(row['parent_cpu_s'], ',.1f')} | {fmt(row['workers_cpu_s'], ',.1f')} | {row['returncode']} |"
        )
    if r["summary"]:
        lines += [
            "",
            "| command | from n | to n | time per task, growth | parent peak RSS, growth |",
            "|---|---:|---:|---:|---:|",
        ]
        for command, s in r["summary"].items():
            growth = f"{s['time_per_task_growth']:.2f}x | {fmt(s['parent_memory_growth'], '.2f')}x"
            lines.append(f"| {command} | {s['from_n']:,} | {s['to_n']:,} | {growth} |")
    return "\n".join(lines)


def sizes(text: str) -> list[int]:
    values = sorted({int(v) for v in text.split(",") if v.strip()})
    if any(v < 1 for v in values):
        raise argparse.ArgumentTypeError("sizes must be >= 1")
    return values


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--generate-sizes", type=sizes, default=GENERATE_SIZES, help=f"comma-separated (default {GENERATE_SIZES})"
    )
    parser.add_argument(
        "--validate-sizes", type=sizes, default=STAGE_SIZES, help=f"sizes of the later stages (default {STAGE_SIZES})"
    )
    parser.add_argument(
        "--commands", default=",".join(COMMANDS), help=f"comma-separated subset of {','.join(COMMANDS)} (default: all)"
    )
    parser.add_argument(
        "--runtime",
        default="auto",
        help="sandbox runtime of the runs: auto, bwrap, rlimit, none (default auto: sandboxed)",
    )
    parser.add_argument("--workers", type=int, help="sandboxed workers per shard (default: the CLI's)")
    parser.add_argument("--shards", type=int, help="generation and validation shards (default: the CLI's)")
    parser.add_argument("--data-root", type=Path, help="an empty or new directory to use (default: a temporary one)")
    parser.add_argument("--keep", action="store_true", help="keep the data root at the end")
    parser.add_argument(
        "--poll-s", type=float, default=0.1, help="sampling interval of the workers' memory (default 0.1 s)"
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of markdown")
    args = parser.parse_args(argv)
    commands = [c.strip() for c in args.commands.split(",") if c.strip()]
    if unknown := set(commands) - set(COMMANDS):
        parser.error(f"unknown commands {sorted(unknown)}; choose from {', '.join(COMMANDS)}")
    if args.data_root is not None and args.data_root.exists() and any(args.data_root.iterdir()):
        parser.error(f"{args.data_root} is not empty: the benchmark needs a fresh data root")
    data_root = args.data_root or Path(tempfile.mkdtemp(prefix="coworkenv-scaling-"))
    data_root.mkdir(parents=True, exist_ok=True)
    options = {"runtime": args.runtime, "workers": args.workers, "shards": args.shards}
    try:
        result = run(args.generate_sizes, args.validate_sizes, commands, options, data_root, args.poll_s)
    finally:
        if args.keep:
            print(f"scaling: data root kept at {data_root}", file=sys.stderr)
        else:
            shutil.rmtree(data_root, ignore_errors=True)
    print(json.dumps(result, indent=2) if args.json else markdown(result))
    return 0 if all(row["returncode"] == 0 for row in result["rows"]) else 1


if __name__ == "__main__":
    raise SystemExit(main())
