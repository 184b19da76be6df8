"""Shared by the benchmarks: machine description, pinning to one core, interleaved timing, and the calibration figure
that makes numbers from different machines comparable."""

from __future__ import annotations

import gc
import os
import platform
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def pin_to_one_core() -> int | None:
    """Pin this process to the first CPU it may use; None where the OS has no affinity API."""
    if not hasattr(os, "sched_setaffinity"):
        return None
    cpu = min(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cpu})
    return cpu


def machine_info(pinned: int | None) -> dict[str, Any]:
    import pydantic

    return {
        "cpu": cpu_model(),
        "logical_cpus": os.cpu_count(),
        "pinned_cpu": pinned,
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "pydantic": pydantic.VERSION,
    }


def time_modes(
    modes: dict[str, Callable[[], None]], rounds: int, warmup: int, repeats: int
) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Wall-clock and CPU seconds per round (one pass over every task), one value per repeat and mode.

    The modes are interleaved repeat by repeat, so that a slow spell of the machine hits them alike. CPU time
    (this process only) leaves out time the process spent waiting for the core on a busy machine.
    """
    for work in modes.values():
        for _ in range(warmup):
            work()
    per_round: dict[str, list[float]] = {name: [] for name in modes}
    cpu_per_round: dict[str, list[float]] = {name: [] for name in modes}
    for _ in range(repeats):
        for name, work in modes.items():
            gc.collect()
            start, cpu_start = time.perf_counter(), time.process_time()
            for _ in range(rounds):
                work()
            per_round[name].append((time.perf_counter() - start) / rounds)
            cpu_per_round[name].append((time.process_time() - cpu_start) / rounds)
    return per_round, cpu_per_round


def display_path(path: Path) -> str:
    """Paths inside the checkout are shown relative to it, so reports do not carry one machine's layout."""
    repo = Path(__file__).resolve().parents[1]
    try:
        return str(path.resolve().relative_to(repo))
    except ValueError:
        return str(path)


CALIBRATION_TEXT = (
    '{"task_id": "calibration-0001", "tool": "mail_search", "calls": 3, "tags": ["inbox", "invoice"], "score": 0.5}'
)


def calibration(loops: int = 20_000, repeats: int = 5) -> dict[str, Any]:
    """A fixed workload measured in the same run as a benchmark: parse a small JSON object into a pydantic model and
    merge its fields into a dict, `loops` times. Every benchmark reports its figures also as ratios to this rate, so
    that figures from machines of different speed (or one machine under different load) can be compared: the
    ratio moves with the code, the absolute rate with the machine. Median of `repeats`; CPU time of this process."""
    from pydantic import BaseModel, ConfigDict

    class Probe(BaseModel):
        model_config = ConfigDict(frozen=True, extra="forbid")
        task_id: str
        tool: str
        calls: int
        tags: list[str]
        score: float

    def work() -> None:
        state: dict[str, Any] = {}
        for i in range(loops):
            probe = Probe.model_validate_json(CALIBRATION_TEXT)
            state.update(probe.__dict__)
            state[i & 255] = probe.calls

    work()  # warm-up
    cpu = []
    for _ in range(repeats):
        gc.collect()
        start = time.process_time()
        work()
        cpu.append(time.process_time() - start)
    cpu.sort()
    median = cpu[len(cpu) // 2]
    return {
        "workload": "pydantic parse + dict update",
        "loops": loops,
        "ops_per_cpu_s": loops / median,
        "us_per_op": median / loops * 1e6,
        "repeats_cpu_s": cpu,
    }


def merged_calibration(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Several calibration runs of one process (e.g. before and after the benchmark) as one: median of all repeats."""
    cpu = sorted(s for run in runs for s in run["repeats_cpu_s"])
    median, loops = statistics.median(cpu), runs[0]["loops"]
    return runs[0] | {"ops_per_cpu_s": loops / median, "us_per_op": median / loops * 1e6, "repeats_cpu_s": cpu}


def calibrated(rate: float, calib: dict[str, Any]) -> float:
    """`rate` (things per second) as a ratio to the calibration rate: things per 1,000 calibration operations."""
    return rate / calib["ops_per_cpu_s"] * 1000


def calibrated_s(seconds: float, calib: dict[str, Any]) -> float:
    """A duration as a ratio to the calibration: how many thousand calibration operations fit in it (for benchmarks
    whose figure is a time, not a rate; the inverse of `calibrated` for one thing)."""
    return seconds * calib["ops_per_cpu_s"] / 1000


def calibration_line(calib: dict[str, Any]) -> str:
    """The markdown line every benchmark prints under its machine line."""
    return (
        f"Calibration ({calib['workload']}, this run): {calib['ops_per_cpu_s']:,.0f} ops per CPU-second ({calib['us_per_op']:.2f} µs/op); "
        '"per 1k calib" = per 1,000 of these ops, "k calib" = thousands of them (docs/benchmarks.md, "Calibration").'
    )
