"""For tests that run things in the sandbox: a runtime by name (bwrap skipped where it is not usable), small limits."""

from __future__ import annotations

import os

import pytest

from coworkenv.sandbox.limits import Limits
from coworkenv.sandbox.runtimes import Runtime
from coworkenv.sandbox.selection import bwrap_usable, get_runtime

LIMITS = Limits(cpu_s=1, wall_s=3, memory_mb=256, file_size_mb=1, output_bytes=64 * 1024, processes=32)
ROOT = os.geteuid() == 0
RUNTIME_NAMES = ["bwrap", "rlimit"]


def usable_runtime(name: str) -> Runtime:
    if name == "bwrap":
        ok, reason = bwrap_usable()
        if not ok:
            pytest.skip(f"bubblewrap is not usable here ({reason}); the rlimit fallback is tested instead")
    return get_runtime(name)
