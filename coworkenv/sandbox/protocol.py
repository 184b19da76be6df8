"""The JSON-lines protocol between a pool and its workers, and the error codes a failed request is answered with.

A worker first writes `{"ready": true, "pid", "uid", "runtime", "seccomp"}`; then, for each request
`{"id", "job", "payload", "budget_s"}` read on its stdin (`budget_s`: the task's wall-clock budget in seconds, at
most `MAX_BUDGET_S`; absent: the worker's `Limits.wall_s`), it writes one response on its stdout: `{"id", "ok": true, "output"}`
or `{"id", "ok": false, "error_code", "error"}`. `"restart": true` in a response means the worker exits after it (its
state can no longer be trusted) and must be replaced. EOF on stdin: the worker exits.

Error codes: `sandbox_timeout` (CPU or wall clock), `sandbox_memory`, `sandbox_processes`, `sandbox_output`
(stdout, stderr or output over `output_bytes`, or a file over `file_size_mb`), `sandbox_crash` (a forked child died
without an answer, or a worker died), `job_error` (the job raised), `unknown_job`, `bad_request`.
"""

from __future__ import annotations

import errno
import json
import traceback
from typing import Any

from coworkenv.sandbox.jobs import JobFailed

MAX_BUDGET_S = 86_400.0
"""A day: more is surely a mistake (and would overflow nothing, but a pool would wait that long on a hung task)."""

# Bound at import: a task's code that replaces `json.dumps` in its own process cannot garble the answer it sends.
_dumps = json.dumps


class LimitHit(BaseException):
    """Raised by the SIGXCPU / SIGALRM handlers inside an inline job (BaseException: jobs' `except Exception` miss it)."""

    def __init__(self, what: str):
        super().__init__(what)
        self.what = what


def to_json(value: Any) -> bytes:
    """A message as UTF-8 JSON (lone surrogates kept: a payload is returned as it came)."""
    return _dumps(value, ensure_ascii=False).encode("utf-8", errors="surrogatepass")


def encode(message: dict[str, Any]) -> bytes:
    """One protocol line."""
    return to_json(message) + b"\n"


def failure(rid: Any, code: str, error: str) -> dict[str, Any]:
    return {"id": rid, "ok": False, "error_code": code, "error": error}


def answer(rid: Any, value: Any, output_bytes: int) -> dict[str, Any]:
    """The response for a job's return value: ok, or why it cannot be sent (not JSON, over the output limit)."""
    try:
        size = len(to_json(value))
    except (TypeError, ValueError) as exc:
        return failure(rid, "job_error", f"the job's output is not JSON: {exc}")
    if size > output_bytes:
        return failure(rid, "sandbox_output", f"output of {size} bytes is over the limit of {output_bytes}")
    return {"id": rid, "ok": True, "output": value}


def describe(exc: BaseException, limit: int = 4000) -> str:
    """An exception for people: its message, then the end of its traceback."""
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__, limit=-8))
    head = f"{type(exc).__name__}: {exc}"
    return (head + "\n" + text[-(limit - len(head)) :])[:limit] if text else head[:limit]


def classify(exc: BaseException) -> str:
    """The error code of an exception a job raised."""
    if isinstance(exc, JobFailed):
        return exc.code
    if isinstance(exc, MemoryError):
        return "sandbox_memory"
    if isinstance(exc, LimitHit):
        return "sandbox_timeout"
    if isinstance(exc, OSError) and exc.errno == errno.EFBIG:
        return "sandbox_output"
    if isinstance(exc, OSError) and exc.errno == errno.EAGAIN and _raised_by_spawn(exc):
        return "sandbox_processes"
    if isinstance(exc, RuntimeError) and "can't start new thread" in str(exc):
        return "sandbox_processes"
    return "job_error"


def _raised_by_spawn(exc: BaseException) -> bool:
    import linecache

    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is None:
        return False
    code = tb.tb_frame.f_code
    if code.co_name in {"_execute_child", "_launch", "start", "_fork_exec"}:
        return True
    line = linecache.getline(code.co_filename, tb.tb_lineno)
    return any(word in line for word in ("fork", "Popen", "spawn", "Thread", "system("))
