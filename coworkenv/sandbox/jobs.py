"""What a sandbox worker can be asked to do: `JOBS`, name → `Job` (a function of one payload string that returns a
JSON-able value).

A job runs inside a worker (`coworkenv.sandbox.worker`), in a fresh scratch directory (its cwd) per request. Two kinds:

- inline (default): runs in the worker process itself, for jobs that only parse untrusted *data* (the validation
  battery: every request builds fresh spec and workspace objects, so one task's state never reaches the next);
- forked (`@job(..., fork=True)`): runs in a child forked from the worker for this one request, with its own
  session, per-task rlimits (CPU, processes) and captured stdout/stderr; the child and everything it started are
  killed when the request ends. Untrusted *code* (`exec`) always runs like this, so it cannot touch the worker.

Jobs are registered by the module that defines them, and the registry records that module: a pool starts its workers
with those modules imported (`--import MODULE`), so the layers above bring their own jobs (`coworkenv.validate.jobs`,
`coworkenv.repair.jobs`) while this package imports none of them. Only the generic `echo` and `exec` live here.

A job signals a failure of its own with `JobFailed(code, message)`; any other exception becomes `job_error`,
except resource exhaustion (`sandbox_memory`, `sandbox_processes`, `sandbox_output`), which the worker classifies.
"""

from __future__ import annotations

import builtins
import linecache
from collections.abc import Callable, Iterable
from typing import Any

from pydantic import BaseModel, ConfigDict

from coworkenv.registry import Registry

JobFn = Callable[[str], Any]


class Job(BaseModel):
    """A registered job: its function, the module that defines it (what a worker imports to know it) and how it runs."""

    model_config = ConfigDict(frozen=True)

    name: str
    fn: JobFn
    module: str
    fork: bool = False
    warmup: Callable[[], None] | None = None
    budget_s: float | None = None
    """The wall-clock seconds one task of this job may take when its caller names none (None: the pool's
    `Limits.wall_s`): the battery asks for a few seconds, a rollout of a real model may ask for minutes."""


JOBS: Registry[Job] = Registry("sandbox job")


class JobFailed(Exception):
    """A job's own verdict that the request failed, with a machine-readable code."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code


def job(
    name: str, *, fork: bool = False, warmup: Callable[[], None] | None = None, budget_s: float | None = None
) -> Callable[[JobFn], JobFn]:
    """Register a job. `fork`: run it in a per-request child (untrusted code). `warmup`: what a worker started
    for this job does before it says it is ready (imports), so that the first task does not pay for it. `budget_s`:
    its per-task wall-clock budget (`Job.budget_s`)."""
    if budget_s is not None and not budget_s > 0:
        raise ValueError(f"sandbox job {name!r}: budget_s must be positive")

    def decorator(fn: JobFn) -> JobFn:
        if fn.__module__ == "__main__":  # a worker imports a job's module by name: __main__ would be its own
            raise ValueError(
                f"sandbox job {name!r} is defined in __main__; define it in a module that a worker can import"
            )
        JOBS.add(name, Job(name=name, fn=fn, module=fn.__module__, fork=fork, warmup=warmup, budget_s=budget_s))
        return fn

    return decorator


def warm(name: str) -> None:
    hook = JOBS.get(name).warmup
    if hook is not None:
        hook()


def task_budget(name: str, wall_s: float, budget_s: float | None = None) -> float:
    """The wall-clock seconds one task of job `name` gets: the caller's `budget_s`, else the job's own, else `wall_s`."""
    if budget_s is not None:
        if not budget_s > 0:
            raise ValueError("budget_s must be positive")
        return float(budget_s)
    own = JOBS.get(name).budget_s
    return own if own is not None else wall_s


def job_modules(names: Iterable[str]) -> list[str]:
    """The modules a worker must import to know these jobs (this one it imports anyway); unknown names raise."""
    return sorted({JOBS.get(name).module for name in names} - {__name__})


@job("echo")
def echo(payload: str) -> str:
    """The payload back: a trivial job (pool tests, overhead benchmark)."""
    return payload


@job("exec", fork=True)
def exec_python(payload: str) -> dict[str, Any]:
    """Run Python source as `__main__` (in a forked child; the worker attaches its stdout and stderr).

    Output: `{"exit_code": 0, "stdout": ..., "stderr": ...}`. An uncaught exception or a non-zero `sys.exit` is a
    failure (`job_error`, or the resource code when a limit was hit).
    """
    filename = "<task>"
    linecache.cache[filename] = (len(payload), None, payload.splitlines(keepends=True), filename)
    code = compile(payload, filename, "exec")
    namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": builtins}
    try:
        exec(code, namespace)  # noqa: S102 - this is the sandbox
    except SystemExit as exc:
        if exc.code not in (None, 0):
            raise JobFailed("job_error", f"exited with status {exc.code!r}") from None
    return {"exit_code": 0}
