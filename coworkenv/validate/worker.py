"""A long-lived sandbox worker: `python -m coworkenv.validate.worker --limits JSON --scratch DIR [--warm JOB]...`.

Started by a `Runtime` (inside bwrap, or under the rlimit fallback) and driven by `coworkenv.validate.pool`. Protocol,
one JSON document per line:

- the worker first writes `{"ready": true, "pid", "uid", "runtime"}`;
- then, for each request `{"id", "job", "payload"}` read on stdin, it writes one response on stdout:
  `{"id", "ok": true, "output"}` or `{"id", "ok": false, "error_code", "error"}`; `"restart": true` in a response
  means the worker exits after it (its state can no longer be trusted) and must be replaced;
- EOF on stdin: the worker exits.

Every request runs with a fresh scratch directory as cwd (removed afterwards) and per-request limits: CPU
(RLIMIT_CPU, for an inline job a soft limit above what the worker used so far), wall clock (an interval timer, or
for a forked job the worker's own deadline), processes (RLIMIT_NPROC in the forked child) and output size. After
each request every process the request left behind is killed: the worker is a child subreaper, so even processes
that escaped with `setsid` are reparented to it and found. The parent pool enforces the wall clock once more (kill
and respawn), and the runtime's address-space, file-size and open-file rlimits hold for the whole worker.

Error codes: `sandbox_timeout` (CPU or wall clock), `sandbox_memory`, `sandbox_processes`, `sandbox_output`
(stdout, stderr or output over `output_bytes`, or a file over `file_size_mb`), `sandbox_crash` (a forked child died
without an answer), `job_error` (the job raised), `unknown_job`, `bad_request`.
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import resource
import selectors
import signal
import stat
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any, BinaryIO

from coworkenv.registry import UnknownName
from coworkenv.validate.jobs import JOBS, JobFailed, is_forked, warm
from coworkenv.validate.sandbox import Capture, Limits, remove_tree

# Bound at import: a task's code that replaces `json.dumps` in its own process cannot garble the answer it sends.
_dumps = json.dumps
_loads = json.loads

PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36
_RESULT_SLACK = 64 * 1024


class _LimitHit(BaseException):
    """Raised by the SIGXCPU / SIGALRM handlers inside an inline job (BaseException: jobs' `except Exception` miss it)."""

    def __init__(self, what: str):
        super().__init__(what)
        self.what = what


def _prctl(option: int, value: int) -> bool:
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _own_processes() -> int:
    n, uid = 0, os.getuid()
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                n += os.stat(f"/proc/{d}").st_uid == uid
            except OSError:
                pass
    return n


def _kept_fds() -> set[int]:
    """Descriptors a task's child must keep: the O_PATH descriptor of the interpreter (rlimit fallback as root)."""
    home = os.environ.get("PYTHONHOME", "")
    prefix = "/proc/self/fd/"
    if home.startswith(prefix) and home[len(prefix) :].isdigit():
        return {int(home[len(prefix) :])}
    return set()


def _pristine(path: Path) -> bool:
    """An empty directory of ours with mode 0700 and no extended attributes (ACLs included)."""
    try:
        st = os.lstat(path)
        return (
            stat.S_ISDIR(st.st_mode)
            and stat.S_IMODE(st.st_mode) == 0o700
            and st.st_uid == os.getuid()
            and not os.listdir(path)
            and not os.listxattr(path)
        )
    except OSError:
        return False


def _describe(exc: BaseException, limit: int = 4000) -> str:
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__, limit=-8))
    head = f"{type(exc).__name__}: {exc}"
    return (head + "\n" + text[-(limit - len(head)) :])[:limit] if text else head[:limit]


def classify(exc: BaseException) -> str:
    """The error code of an exception a job raised."""
    if isinstance(exc, JobFailed):
        return exc.code
    if isinstance(exc, MemoryError):
        return "sandbox_memory"
    if isinstance(exc, _LimitHit):
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


class Worker:
    def __init__(self, limits: Limits, scratch: Path, *, nproc_relative: bool = False, runtime: str = ""):
        self.limits = limits
        self.scratch = scratch
        self.nproc_relative = nproc_relative
        self.runtime = runtime
        self.in_job = False
        self.spare: Path | None = None
        self.keep_fds = _kept_fds()
        # The protocol channel gets private descriptors; fd 0 becomes /dev/null and fd 1 the worker's stderr, so that
        # stray prints cannot corrupt the protocol (and a forked task closes the channel altogether).
        self.proto_in: BinaryIO = os.fdopen(os.dup(0), "rb")
        self.proto_out: BinaryIO = os.fdopen(os.dup(1), "wb")
        devnull = os.open(os.devnull, os.O_RDWR)
        os.dup2(devnull, 0)
        os.dup2(2, 1)
        os.close(devnull)
        _prctl(PR_SET_DUMPABLE, 0)  # a task's process (same uid) may not ptrace or read the worker's memory
        self.subreaper = _prctl(PR_SET_CHILD_SUBREAPER, 1)  # orphans of a task come to us, to be killed
        signal.signal(signal.SIGXCPU, self._on_limit)
        signal.signal(signal.SIGALRM, self._on_limit)

    def _on_limit(self, signum: int, _frame: Any) -> None:
        if self.in_job:
            self.in_job = False
            raise _LimitHit("CPU" if signum == signal.SIGXCPU else "wall-clock")

    # ---- protocol

    def send(self, message: dict[str, Any]) -> None:
        self.proto_out.write(json.dumps(message, ensure_ascii=False).encode("utf-8", errors="surrogatepass") + b"\n")
        self.proto_out.flush()

    def serve(self, warm_jobs: list[str]) -> int:
        for name in warm_jobs:
            warm(name)
        self.send(
            {
                "ready": True,
                "pid": os.getpid(),
                "uid": os.getuid(),
                "runtime": self.runtime,
                "seccomp": os.environ.get("COWORKENV_SANDBOX_SECCOMP") == "1",
            }
        )
        while True:
            line = self.proto_in.readline()
            if not line:
                return 0
            try:
                request = json.loads(line)
                if not isinstance(request, dict):
                    raise ValueError("a request is a JSON object")
            except ValueError as exc:
                self.send({"id": None, "ok": False, "error_code": "bad_request", "error": str(exc)[:500]})
                continue
            response, restart = self.handle(request)
            if restart:
                response["restart"] = True
            try:
                self.send(response)
            except (BrokenPipeError, OSError):
                return 1
            if restart:
                return 0

    # ---- one request

    def handle(self, request: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        rid = request.get("id")
        payload = request.get("payload")
        if not isinstance(payload, str):
            return {"id": rid, "ok": False, "error_code": "bad_request", "error": "payload must be a string"}, False
        try:
            fn = JOBS.get(str(request.get("job")))
        except UnknownName as exc:
            return {"id": rid, "ok": False, "error_code": "unknown_job", "error": str(exc)}, False
        workdir, self.spare = self.spare or Path(tempfile.mkdtemp(prefix="task-", dir=self.scratch)), None
        restart = False
        try:
            os.chdir(workdir)
            if is_forked(fn):
                response, restart = self.run_forked(rid, fn, payload)
            else:
                response, restart = self.run_inline(rid, fn, payload)
        finally:
            os.chdir(self.scratch)
            if not self.kill_descendants():
                restart = True
            if _pristine(workdir):  # as fresh as a new one (empty, our mode, no xattrs): reuse it, mkdir+rmdir is not free
                self.spare = workdir
            else:
                remove_tree(workdir)
        return response, restart

    def _output(self, rid: Any, value: Any) -> dict[str, Any]:
        try:
            size = len(json.dumps(value, ensure_ascii=False).encode("utf-8", errors="surrogatepass"))
        except (TypeError, ValueError) as exc:
            return {"id": rid, "ok": False, "error_code": "job_error", "error": f"the job's output is not JSON: {exc}"}
        if size > self.limits.output_bytes:
            return {
                "id": rid,
                "ok": False,
                "error_code": "sandbox_output",
                "error": f"output of {size} bytes is over the limit of {self.limits.output_bytes}",
            }
        return {"id": rid, "ok": True, "output": value}

    def run_inline(self, rid: Any, fn: Any, payload: str) -> tuple[dict[str, Any], bool]:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        _soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
        soft = int(usage.ru_utime + usage.ru_stime + self.limits.cpu_s) + 1
        if hard != resource.RLIM_INFINITY:
            soft = min(soft, hard)
        restart = False
        self.in_job = True
        try:
            resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))
            signal.setitimer(signal.ITIMER_REAL, self.limits.wall_s)
            value = fn(payload)
            self.in_job = False
            response = self._output(rid, value)
        except _LimitHit as exc:
            response = {"id": rid, "ok": False, "error_code": "sandbox_timeout", "error": f"{exc.what} limit exceeded ({self._limit_text(exc.what)})"}
            restart = True
        except BaseException as exc:  # noqa: BLE001 - every failure is an answer
            self.in_job = False
            code = classify(exc)
            response = {"id": rid, "ok": False, "error_code": code, "error": _describe(exc)}
            restart = code != "job_error" or not isinstance(exc, Exception)
        finally:
            self.in_job = False
            signal.setitimer(signal.ITIMER_REAL, 0)
            resource.setrlimit(resource.RLIMIT_CPU, (hard, hard))
        return response, restart

    def _limit_text(self, what: str) -> str:
        return f"{self.limits.cpu_s:g} s of CPU" if what == "CPU" else f"{self.limits.wall_s:g} s"

    # ---- a forked request

    def _child(self, fn: Any, payload: str, out_w: int, err_w: int, res_w: int) -> None:
        me = os.getpid()
        os.setsid()  # its own process group: killed as a whole
        for sig in (signal.SIGXCPU, signal.SIGALRM, signal.SIGTERM):
            signal.signal(sig, signal.SIG_DFL)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.dup2(out_w, 1)
        os.dup2(err_w, 2)
        keep = {0, 1, 2, res_w, *self.keep_fds}
        try:
            top = max(os.listdir("/proc/self/fd"), key=int)
            highest = int(top) + 1
        except (OSError, ValueError):
            highest = 1024
        for fd in range(3, highest):
            if fd not in keep:
                try:
                    os.close(fd)
                except OSError:
                    pass
        resource.setrlimit(resource.RLIMIT_CPU, self.limits.cpu_rlimit())
        nproc = self.limits.processes + 1 + (_own_processes() if self.nproc_relative else 0)
        try:
            resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
        except (ValueError, OSError):
            pass
        sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115
        try:
            value = fn(payload)
            message: dict[str, Any] = {"ok": True, "value": value}
        except BaseException as exc:  # noqa: BLE001
            message = {"ok": False, "error_code": classify(exc), "error": _describe(exc)}
        if os.getpid() != me:  # a process the task forked got here: only the task's own process answers
            os._exit(0)
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        try:
            data = _dumps(message, ensure_ascii=False).encode("utf-8", errors="surrogatepass")
        except (TypeError, ValueError) as exc:
            data = _dumps({"ok": False, "error_code": "job_error", "error": f"the job's output is not JSON: {exc}"}).encode()
        view = memoryview(data)
        while view:
            view = view[os.write(res_w, view) :]

    def run_forked(self, rid: Any, fn: Any, payload: str) -> tuple[dict[str, Any], bool]:
        limits = self.limits
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        res_r, res_w = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - runs in the child (and in whatever the task forks, which never returns from here)
            try:
                self._child(fn, payload, out_w, err_w, res_w)
            finally:
                os._exit(0)
        for fd in (out_w, err_w, res_w):
            os.close(fd)
        out, err, res = Capture(limits.output_bytes), Capture(limits.output_bytes), Capture(limits.output_bytes + _RESULT_SLACK)
        pidfd = os.pidfd_open(pid)
        sel = selectors.DefaultSelector()
        sel.register(pidfd, selectors.EVENT_READ, None)
        for fd, capture in ((out_r, out), (err_r, err), (res_r, res)):
            os.set_blocking(fd, False)
            sel.register(fd, selectors.EVENT_READ, capture)
        deadline = time.monotonic() + limits.wall_s
        exited = timed_out = overflow = False
        try:
            while not exited:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    timed_out = True
                    break
                for key, _ in sel.select(remaining):
                    if key.data is None:
                        exited = True
                    elif not key.data.read_from(key.fd):
                        sel.unregister(key.fd)
                if out.overflow or err.overflow or res.overflow:
                    overflow = True
                    break
            if exited:
                for fd, capture in ((out_r, out), (err_r, err), (res_r, res)):
                    capture.read_from(fd, drain=True)
                overflow = out.overflow or err.overflow or res.overflow
        finally:
            sel.close()
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
            fail = ("sandbox_timeout", f"wall-clock limit exceeded ({limits.wall_s:g} s)")
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
                code = os.waitstatus_to_exitcode(status)
                fail = ("sandbox_crash", f"the task process exited with status {code} without an answer")
        if fail is not None:
            tail = stderr[-2000:]
            return {"id": rid, "ok": False, "error_code": fail[0], "error": fail[1] + (f"\n--- stderr ---\n{tail}" if tail else "")}, False
        if not message.get("ok"):
            return {
                "id": rid,
                "ok": False,
                "error_code": str(message.get("error_code") or "job_error"),
                "error": str(message.get("error", ""))[:8000],
            }, False
        value = message.get("value")
        output = {**value, "stdout": stdout, "stderr": stderr} if isinstance(value, dict) else {"value": value, "stdout": stdout, "stderr": stderr}
        return self._output(rid, output), False

    # ---- hygiene

    def _children(self) -> list[int]:
        me = os.getpid()
        try:
            with open(f"/proc/self/task/{me}/children") as fh:
                return [int(p) for p in fh.read().split()]
        except OSError:
            pass
        kids = []
        for d in os.listdir("/proc"):
            if d.isdigit():
                try:
                    with open(f"/proc/{d}/stat") as fh:
                        fields = fh.read().rsplit(")", 1)[1].split()
                    if int(fields[1]) == me:
                        kids.append(int(d))
                except (OSError, IndexError, ValueError):
                    pass
        return kids

    def kill_descendants(self) -> bool:
        """SIGKILL every process a request left behind (orphans come to us: we are a subreaper); True when none is left."""
        for _ in range(200):
            kids = self._children()
            if not kids:
                return True
            for kid in kids:
                try:
                    os.kill(kid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            for kid in kids:
                try:
                    os.waitpid(kid, 0)
                except ChildProcessError:
                    pass
        return not self._children()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m coworkenv.validate.worker", description="Sandbox worker (JSON lines on stdin/stdout).")
    parser.add_argument("--limits", default="{}", help="Limits as JSON")
    parser.add_argument("--scratch", default=None, help="Writable directory for per-request scratch dirs (default: a temporary one)")
    parser.add_argument("--runtime", default="", help="Name of the runtime that started the worker (reported)")
    parser.add_argument("--nproc", choices=["absolute", "relative"], default="absolute",
                        help="RLIMIT_NPROC for a task: absolute (own uid or user namespace) or on top of the uid's current processes")  # fmt: skip
    parser.add_argument("--warm", action="append", default=[], help="Job to warm up before reporting ready (repeatable)")
    args = parser.parse_args(argv)
    limits = Limits.model_validate_json(args.limits)
    scratch = Path(args.scratch) if args.scratch else Path(tempfile.mkdtemp(prefix="coworkenv-worker-"))
    try:
        worker = Worker(limits, scratch, nproc_relative=args.nproc == "relative", runtime=args.runtime)
        return worker.serve(args.warm)
    finally:
        if not args.scratch:  # ours: gone with us (a runtime's scratch dir is removed by whoever started the worker)
            os.chdir("/")
            remove_tree(scratch)


if __name__ == "__main__":
    sys.exit(main())
