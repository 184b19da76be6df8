"""Shared by the benchmarks: machine description, pinning to one core, interleaved timing."""

from __future__ import annotations

import gc
import os
import platform
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
