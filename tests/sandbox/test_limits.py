"""Limits: frozen, documented, strict."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from coworkenv.sandbox.limits import Limits


def test_limits_are_frozen_documented_and_strict():
    limits = Limits()
    with pytest.raises(ValidationError):
        limits.cpu_s = 5  # type: ignore[misc]
    with pytest.raises(ValidationError):
        Limits(cpu_seconds=3)  # type: ignore[call-arg]
    with pytest.raises(ValidationError):
        Limits(memory_mb=0)
    for name in ("cpu_s", "memory_mb", "file_size_mb", "open_files", "output_bytes", "wall_s", "processes"):
        assert Limits.model_fields[name].description, name
    assert limits.memory_mb == 1024  # ~1 GiB of address space by default, configurable
    assert (limits.cpu_s, limits.wall_s, limits.file_size_mb) == (30.0, 60.0, 64)
    assert (limits.open_files, limits.output_bytes, limits.processes) == (256, 1_000_000, 32)
    assert Limits(cpu_s=1.2).cpu_rlimit() == (2, 3)
    assert Limits(cpu_s=0.5).cpu_rlimit() == (1, 2)  # at least a second: RLIMIT_CPU counts whole seconds
