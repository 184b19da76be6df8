"""A long-lived sandbox worker: `python -m coworkenv.sandbox.worker --limits JSON --scratch DIR [--import MODULE]...
[--warm JOB]...`, speaking the protocol of `protocol.py` on its stdin and stdout.

Started by a `Runtime` (inside bwrap, or under the rlimit fallback) and driven by `coworkenv.sandbox.pool`. Before it
says it is ready it imports the modules named by `--import` (which register the jobs it will be asked to run: this
package knows only `echo` and `exec`) and runs the warm-up of each `--warm` job.

Every request runs with a fresh scratch directory as cwd (removed afterwards, or reused when the job left it as it
was) and per-request limits: CPU (RLIMIT_CPU, for an inline job a soft limit above what the worker used so far), wall
clock (the request's `budget_s`: an interval timer, or for a forked job the worker's own deadline, see `forked.py`),
processes (RLIMIT_NPROC in the forked child) and output size. After each request every process the request left behind is killed: the worker is
a child subreaper, so even processes that escaped with `setsid` are reparented to it and found. The parent pool
enforces the wall clock once more (kill and respawn), and the runtime's address-space, file-size and open-file
rlimits hold for the whole worker.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import resource
import signal
import stat
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any, BinaryIO

from coworkenv.registry import UnknownName
from coworkenv.sandbox.boot import SECCOMP_ENV
from coworkenv.sandbox.forked import kept_fds, run_forked
from coworkenv.sandbox.jobs import JOBS, JobFn, warm
from coworkenv.sandbox.limits import Limits
from coworkenv.sandbox.process import remove_tree
from coworkenv.sandbox.protocol import MAX_BUDGET_S, LimitHit, answer, classify, describe, encode, failure

PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36


def _prctl(option: int, value: int) -> bool:
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


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


class JobServer:
    """The worker's side of the protocol: reads requests, runs each job (inline or forked), answers, cleans up."""

    def __init__(self, limits: Limits, scratch: Path, *, nproc_relative: bool = False, runtime: str = ""):
        self.limits = limits
        self.scratch = scratch
        self.nproc_relative = nproc_relative
        self.runtime = runtime
        self.in_job = False
        self.spare: Path | None = None
        self.keep_fds = kept_fds()
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
            raise LimitHit("CPU" if signum == signal.SIGXCPU else "wall-clock")

    # ---- protocol

    def send(self, message: dict[str, Any]) -> None:
        self.proto_out.write(encode(message))
        self.proto_out.flush()

    def serve(self, imports: Sequence[str] = (), warm_jobs: Sequence[str] = ()) -> int:
        for module in imports:  # after the channel is private: what a module prints at import cannot corrupt it
            importlib.import_module(module)
        for name in warm_jobs:
            warm(name)
        self.send(
            {
                "ready": True,
                "pid": os.getpid(),
                "uid": os.getuid(),
                "runtime": self.runtime,
                "seccomp": os.environ.get(SECCOMP_ENV) == "1",
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
                self.send(failure(None, "bad_request", str(exc)[:500]))
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
            return failure(rid, "bad_request", "payload must be a string"), False
        try:
            job = JOBS.get(str(request.get("job")))
        except UnknownName as exc:
            return failure(rid, "unknown_job", str(exc)), False
        budget = request.get("budget_s", self.limits.wall_s)
        if isinstance(budget, bool) or not isinstance(budget, int | float) or not 0 < budget <= MAX_BUDGET_S:
            return failure(rid, "bad_request", f"budget_s must be a number of seconds in (0, {MAX_BUDGET_S:g}]"), False
        limits = self.limits.model_copy(update={"wall_s": float(budget)})  # this request's wall clock
        workdir, self.spare = self.spare or Path(tempfile.mkdtemp(prefix="task-", dir=self.scratch)), None
        restart = False
        try:
            os.chdir(workdir)
            if job.fork:
                response = run_forked(
                    rid, job.fn, payload, limits=limits, keep_fds=self.keep_fds, nproc_relative=self.nproc_relative
                )
            else:
                response, restart = self.run_inline(rid, job.fn, payload, limits)
        finally:
            os.chdir(self.scratch)
            if not kill_descendants():
                restart = True
            if _pristine(
                workdir
            ):  # as fresh as a new one (empty, our mode, no xattrs): reuse it, mkdir+rmdir is not free
                self.spare = workdir
            else:
                remove_tree(workdir)
        return response, restart

    def run_inline(
        self, rid: Any, fn: JobFn, payload: str, limits: Limits | None = None
    ) -> tuple[dict[str, Any], bool]:
        """Run `fn(payload)` in this process under the request's CPU and wall-clock limits (default: the worker's):
        (response, restart)."""
        limits = limits or self.limits
        usage = resource.getrusage(resource.RUSAGE_SELF)
        _soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
        soft = int(usage.ru_utime + usage.ru_stime + limits.cpu_s) + 1
        if hard != resource.RLIM_INFINITY:
            soft = min(soft, hard)
        restart = False
        self.in_job = True
        try:
            resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))
            signal.setitimer(signal.ITIMER_REAL, limits.wall_s)
            value = fn(payload)
            self.in_job = False
            response = answer(rid, value, limits.output_bytes)
        except LimitHit as exc:
            spent = f"{limits.cpu_s:g} s of CPU" if exc.what == "CPU" else f"the task's budget of {limits.wall_s:g} s"
            response = failure(rid, "sandbox_timeout", f"{exc.what} limit exceeded ({spent})")
            restart = True
        except BaseException as exc:  # noqa: BLE001 - every failure is an answer
            self.in_job = False
            code = classify(exc)
            response = failure(rid, code, describe(exc))
            restart = code != "job_error" or not isinstance(exc, Exception)
        finally:
            self.in_job = False
            signal.setitimer(signal.ITIMER_REAL, 0)
            resource.setrlimit(resource.RLIMIT_CPU, (hard, hard))
        return response, restart


# ---- hygiene


def children() -> list[int]:
    """Our child processes (orphans of a task included: we are a subreaper)."""
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


def kill_descendants() -> bool:
    """SIGKILL every process a request left behind (orphans come to us: we are a subreaper); True when none is left."""
    for _ in range(200):
        kids = children()
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
    return not children()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m coworkenv.sandbox.worker", description="Sandbox worker (JSON lines on stdin/stdout)."
    )
    parser.add_argument("--limits", default="{}", help="Limits as JSON")
    parser.add_argument(
        "--scratch", default=None, help="Writable directory for per-request scratch dirs (default: a temporary one)"
    )
    parser.add_argument("--runtime", default="", help="Name of the runtime that started the worker (reported)")
    parser.add_argument(
        "--nproc",
        choices=["absolute", "relative"],
        default="absolute",
        help="RLIMIT_NPROC for a task: absolute (own uid or user namespace) or on top of the uid's current processes",
    )
    parser.add_argument(
        "--import",
        dest="imports",
        action="append",
        default=[],
        metavar="MODULE",
        help="Module to import before reporting ready, for the jobs it registers (repeatable)",
    )
    parser.add_argument(
        "--warm", action="append", default=[], help="Job to warm up before reporting ready (repeatable)"
    )
    args = parser.parse_args(argv)
    limits = Limits.model_validate_json(args.limits)
    scratch = Path(args.scratch) if args.scratch else Path(tempfile.mkdtemp(prefix="coworkenv-worker-"))
    try:
        server = JobServer(limits, scratch, nproc_relative=args.nproc == "relative", runtime=args.runtime)
        return server.serve(args.imports, args.warm)
    finally:
        if not args.scratch:  # ours: gone with us (a runtime's scratch dir is removed by whoever started the worker)
            os.chdir("/")
            remove_tree(scratch)


if __name__ == "__main__":
    sys.exit(main())
