"""A forked request: the job runs in a child forked from the worker for this one request (untrusted code: `exec`).

The child gets a session of its own (killed as a whole with its process group), the default handlers for the limit
signals, /dev/null as stdin, pipes as stdout and stderr (captured up to `output_bytes`), a result pipe for its
answer, and per-task rlimits: CPU, and processes (RLIMIT_NPROC, on top of what the uid already runs when the runtime
gives no uid of its own). The worker waits for it with the task's wall clock, then kills its group, whatever happens.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import sys
import time
from typing import Any

from coworkenv.sandbox.boot import own_processes
from coworkenv.sandbox.jobs import JobFn
from coworkenv.sandbox.limits import Limits
from coworkenv.sandbox.process import Capture, pump
from coworkenv.sandbox.protocol import answer, classify, describe, failure, to_json

_RESULT_SLACK = 64 * 1024  # the answer wraps the output in a little JSON of its own
_FD_PREFIX = "/proc/self/fd/"


def kept_fds() -> set[int]:
    """Descriptors a task's child must keep: the O_PATH descriptor of the interpreter (rlimit fallback as root)."""
    home = os.environ.get("PYTHONHOME", "")
    if home.startswith(_FD_PREFIX) and home[len(_FD_PREFIX) :].isdigit():
        return {int(home[len(_FD_PREFIX) :])}
    return set()


def run_forked(
    rid: Any, fn: JobFn, payload: str, *, limits: Limits, keep_fds: set[int], nproc_relative: bool
) -> dict[str, Any]:
    """Run `fn(payload)` in a child of its own; the response to send (the worker serves on whatever happened)."""
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    res_r, res_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child (and in whatever the task forks, which never returns from here)
        try:
            _child(fn, payload, (out_w, err_w, res_w), limits=limits, keep_fds=keep_fds, nproc_relative=nproc_relative)
        finally:
            os._exit(0)
    for fd in (out_w, err_w, res_w):
        os.close(fd)
    out, err, res = (
        Capture(limits.output_bytes),
        Capture(limits.output_bytes),
        Capture(limits.output_bytes + _RESULT_SLACK),
    )
    pidfd = os.pidfd_open(pid)
    exited = timed_out = overflow = False
    try:
        exited, timed_out, overflow = pump(
            pidfd, ((out_r, out), (err_r, err), (res_r, res)), time.monotonic() + limits.wall_s
        )
    finally:
        try:
            os.killpg(pid, signal.SIGKILL)  # the child's group: itself when it did not finish, what it left behind
        except (ProcessLookupError, PermissionError):
            pass
        _pid, status, usage = os.wait4(pid, 0)
        for fd in (pidfd, out_r, err_r, res_r):
            os.close(fd)
    cpu = usage.ru_utime + usage.ru_stime
    stdout, stderr = out.text(), err.text()
    sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
    fail: tuple[str, str] | None = None
    if timed_out:
        fail = ("sandbox_timeout", f"wall-clock limit exceeded (the task's budget of {limits.wall_s:g} s)")
    elif overflow:
        what = "stdout" if out.overflow else "stderr" if err.overflow else "output"
        fail = ("sandbox_output", f"{what} over the limit of {limits.output_bytes} bytes")
    elif sig == signal.SIGXCPU or (sig == signal.SIGKILL and cpu >= limits.cpu_rlimit()[0] - 0.5):
        fail = ("sandbox_timeout", f"CPU limit exceeded ({limits.cpu_s:g} s)")
    elif sig == signal.SIGXFSZ:
        fail = ("sandbox_output", f"a file over the limit of {limits.file_size_mb} MiB")
    elif sig is not None:
        fail = ("sandbox_crash", f"killed by {signal.Signals(sig).name}")
    if fail is None:
        try:
            message = json.loads(res.data()) if res.size else None
        except ValueError:
            message = None
        if not isinstance(message, dict):
            fail = (
                "sandbox_crash",
                f"the task process exited with status {os.waitstatus_to_exitcode(status)} without an answer",
            )
    if fail is not None:
        tail = stderr[-2000:]
        return failure(rid, fail[0], fail[1] + (f"\n--- stderr ---\n{tail}" if tail else ""))
    if not message.get("ok"):
        return failure(rid, str(message.get("error_code") or "job_error"), str(message.get("error", ""))[:8000])
    value = message.get("value")
    output = (
        {**value, "stdout": stdout, "stderr": stderr}
        if isinstance(value, dict)
        else {"value": value, "stdout": stdout, "stderr": stderr}
    )
    return answer(rid, output, limits.output_bytes)


def _child(
    fn: JobFn, payload: str, pipes: tuple[int, int, int], *, limits: Limits, keep_fds: set[int], nproc_relative: bool
) -> None:
    out_w, err_w, res_w = pipes
    me = os.getpid()
    os.setsid()  # its own process group: killed as a whole
    for sig in (signal.SIGXCPU, signal.SIGALRM, signal.SIGTERM):
        signal.signal(sig, signal.SIG_DFL)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(out_w, 1)
    os.dup2(err_w, 2)
    _close_all_but({0, 1, 2, res_w, *keep_fds})
    resource.setrlimit(resource.RLIMIT_CPU, limits.cpu_rlimit())
    nproc = limits.processes + 1 + (own_processes() if nproc_relative else 0)
    try:
        resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
    except (ValueError, OSError):
        pass
    sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115
    try:
        value = fn(payload)
        message: dict[str, Any] = {"ok": True, "value": value}
    except BaseException as exc:  # noqa: BLE001
        message = {"ok": False, "error_code": classify(exc), "error": describe(exc)}
    if os.getpid() != me:  # a process the task forked got here: only the task's own process answers
        os._exit(0)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    try:
        data = to_json(message)
    except (TypeError, ValueError) as exc:
        data = to_json({"ok": False, "error_code": "job_error", "error": f"the job's output is not JSON: {exc}"})
    view = memoryview(data)
    while view:
        view = view[os.write(res_w, view) :]


def _close_all_but(keep: set[int]) -> None:
    """Close every inherited descriptor but `keep` (the protocol channel above all: the task must not write to it)."""
    try:
        highest = int(max(os.listdir("/proc/self/fd"), key=int)) + 1
    except (OSError, ValueError):
        highest = 1024
    for fd in range(3, highest):
        if fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass
