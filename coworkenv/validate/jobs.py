"""What a sandbox worker can be asked to do: `JOBS`, name → function(payload: str) -> JSON-able value.

A job runs inside a worker (`coworkenv.validate.worker`), in a fresh scratch directory (its cwd) per request. Two
kinds:

- inline (default): runs in the worker process itself, for jobs that only parse untrusted *data* (the validation
  battery: every request builds fresh spec and workspace objects, so one task's state never reaches the next);
- forked (`@job(..., fork=True)`): runs in a child forked from the worker for this one request, with its own
  session, per-task rlimits (CPU, processes) and captured stdout/stderr; the child and everything it started are
  killed when the request ends. Untrusted *code* (`exec`) always runs like this, so it cannot touch the worker.

A job signals a failure of its own with `JobFailed(code, message)`; any other exception becomes `job_error`,
except resource exhaustion (`sandbox_memory`, `sandbox_processes`, `sandbox_output`), which the worker classifies.
"""

from __future__ import annotations

import builtins
import linecache
from collections.abc import Callable
from typing import Any

from coworkenv.registry import Registry

JobFn = Callable[[str], Any]

JOBS: Registry[JobFn] = Registry("sandbox job")


class JobFailed(Exception):
    """A job's own verdict that the request failed, with a machine-readable code."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code


def job(name: str, *, fork: bool = False, warmup: Callable[[], None] | None = None) -> Callable[[JobFn], JobFn]:
    """Register a job. `fork`: run it in a per-request child (untrusted code). `warmup`: what a worker started
    for this job does before it says it is ready (imports), so that the first task does not pay for it."""

    def decorator(fn: JobFn) -> JobFn:
        fn.sandbox_fork = fork  # type: ignore[attr-defined]
        fn.sandbox_warmup = warmup  # type: ignore[attr-defined]
        JOBS.add(name, fn)
        return fn

    return decorator


def is_forked(fn: JobFn) -> bool:
    return bool(getattr(fn, "sandbox_fork", False))


def warm(name: str) -> None:
    hook = getattr(JOBS.get(name), "sandbox_warmup", None)
    if hook is not None:
        hook()


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


_BATTERY_IMPORTS = (
    "coworkenv.validate.battery", "coworkenv.agents", "coworkenv.episode.runner", "coworkenv.episode.trajectory", "coworkenv.grading.score",
    "coworkenv.grading.consistency", "coworkenv.grading.checks", "coworkenv.grading.matching", "coworkenv.workspace.tools",
    "coworkenv.workspace.paths", "coworkenv.spec.workspace",
)  # fmt: skip


def _warm_validate() -> None:
    """Import what the battery imports lazily, so a worker's first task costs what its others do."""
    import importlib

    for module in _BATTERY_IMPORTS:
        try:
            importlib.import_module(module)
        except ImportError:
            pass


@job("validate", warmup=_warm_validate)
def validate(payload: str) -> Any:
    """The validation battery on one raw TaskSpec JSON text (parsed here, inside the sandbox): TaskValidation JSON."""
    from coworkenv.validate.battery import validate_spec_json

    return validate_spec_json(payload)


def _warm_repair() -> None:
    _warm_validate()
    import coworkenv.repair.loop  # noqa: F401


@job("repair", warmup=_warm_repair)
def repair(payload: str) -> dict[str, Any]:
    """Rule-based repair of one task: `{"spec", "validation", "rounds"}` → the `RepairOutcome` as JSON.

    The repairers re-run the oracle and other episodes on the (untrusted) spec, so they run in the sandbox too.
    """
    import json

    from coworkenv.repair.loop import repair_task
    from coworkenv.validate.verdict import TaskValidation

    request = json.loads(payload)
    validation = TaskValidation.model_validate(request["validation"]) if request.get("validation") else None
    outcome = repair_task(request["spec"], validation, rounds=int(request.get("rounds", 3)), include_advisory=bool(request.get("advisory")))
    return outcome.model_dump(mode="json")
