"""What a sandbox may use (`Limits`), what a one-shot run gave (`RunResult`), and `SandboxError`, for a sandbox that
cannot be used at all (as opposed to a task that hit a limit, which is a result, never an exception)."""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from coworkenv.errors import CoworkEnvError

ResourceKind = Literal["cpu", "memory", "wall", "output", "file_size", "processes"]


class SandboxError(CoworkEnvError):
    """A runtime that cannot be used here, or a sandbox that would not start."""


class Limits(BaseModel):
    """Resource limits for one sandboxed task (per-task in a worker pool, per process for `Runtime.run`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    cpu_s: float = Field(
        30.0,
        gt=0,
        description="CPU seconds one task may use (RLIMIT_CPU of the process that runs it); more is `sandbox_timeout`.",
    )
    memory_mb: int = Field(
        1024,
        ge=64,
        description="Address space of each sandboxed process in MiB (RLIMIT_AS); more is `sandbox_memory`. `import torch` needs ~4096.",
    )
    file_size_mb: int = Field(
        64, ge=1, description="Largest file a task may write, in MiB (RLIMIT_FSIZE); more is `sandbox_output`."
    )
    open_files: int = Field(256, ge=16, description="Open file descriptors per process (RLIMIT_NOFILE).")
    output_bytes: int = Field(
        1_000_000,
        ge=1024,
        description="Most bytes kept of stdout, of stderr and of a job's JSON output; more is `sandbox_output` (the task is killed).",
    )
    wall_s: float = Field(
        60.0,
        gt=0,
        description="Wall-clock seconds one task may take; more is `sandbox_timeout` (the task, or its worker, is killed). "
        "In a worker pool, the default budget of a task whose job declares none and whose caller gives none (`budget_s`).",
    )
    processes: int = Field(
        32,
        ge=2,
        description="Processes (threads count too) a task may have at once (RLIMIT_NPROC under the sandbox's own uid); a fork bomb hits it. "
        "A task's memory is bounded by processes × memory_mb.",
    )

    def cpu_rlimit(self) -> tuple[int, int]:
        """(soft, hard) RLIMIT_CPU: SIGXCPU at the soft limit, SIGKILL a second later."""
        soft = max(1, math.ceil(self.cpu_s))
        return soft, soft + 1


class RunResult(BaseModel):
    """What one `Runtime.run` gave: exit status, (truncated) output and which limit, if any, stopped it."""

    model_config = ConfigDict(frozen=True)

    runtime: str
    exit_code: int | None = Field(description="Exit status; None when killed by a signal.")
    killed_by_signal: int | None = Field(None, description="The signal that ended the process, if one did.")
    stdout: str = ""
    stderr: str = ""
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    timed_out: bool = Field(False, description="Killed at the wall-clock limit.")
    resource_exceeded: ResourceKind | None = Field(None, description="The limit that stopped the process, if one did.")
    wall_s: float = 0.0
    cpu_s: float = Field(0.0, description="CPU seconds of the sandboxed processes that were waited for.")

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and self.resource_exceeded is None and not self.timed_out
