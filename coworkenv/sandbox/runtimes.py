"""The `Runtime` interface: runs untrusted things under `Limits`, one-shot (`run`) or as a long-lived worker
(`spawn_worker`). A runtime only says how to start a command line in its sandbox (`_popen`) and how to reach Python
there (`_python`); launching through the boot program and reading the outcome are shared, here.

Every sandboxed process starts as `python -s -P -B boot.py CONFIG_JSON` (see `boot.py`): the config carries the
rlimits, the seccomp filter, the site dirs and the target (a module, a source file, or an argv to exec).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict

from coworkenv.sandbox.boot import EXIT_FILE_SIZE, EXIT_MEMORY, EXIT_PROCESSES
from coworkenv.sandbox.identity import Identity, allocate_identity
from coworkenv.sandbox.interpreter import PythonLayout, current_layout, sandbox_env
from coworkenv.sandbox.limits import Limits, ResourceKind, RunResult, SandboxError
from coworkenv.sandbox.process import Capture, SandboxProcess, prepare_scratch, pump, remove_tree
from coworkenv.sandbox.seccomp import seccomp_filter

WORKER_MODULE = "coworkenv.sandbox.worker"
SOURCE_FILE = "_sandbox_main.py"
EXIT_REASONS: dict[int, ResourceKind] = {
    EXIT_MEMORY: "memory",
    EXIT_PROCESSES: "processes",
    EXIT_FILE_SIZE: "file_size",
}


class PythonEntry(BaseModel):
    """How a sandboxed process reaches Python: the interpreter and the boot program (paths valid inside the sandbox),
    the environment they need, and descriptors to pass (closed here once the sandbox has started)."""

    model_config = ConfigDict(frozen=True)

    executable: str
    boot: str
    env: dict[str, str] = {}
    fds: tuple[int, ...] = ()


class Runtime(ABC):
    """Runs untrusted things under limits: one-shot (`run`) or as a long-lived worker (`spawn_worker`)."""

    name: ClassVar[str]
    _probes: ClassVar[dict[str, tuple[bool, str]]] = {}
    _probe_lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, layout: PythonLayout | None = None):
        self.layout = layout or current_layout()

    # ---- what a runtime provides

    @abstractmethod
    def _popen(
        self,
        inner: list[str],
        *,
        scratch: Path,
        identity: Identity | None,
        env: dict[str, str],
        stdin: Any,
        stdout: Any,
        stderr: Any,
        pass_fds: Sequence[int],
    ) -> subprocess.Popen[bytes]:
        """Start `inner` (a command line valid inside the sandbox) in the sandbox."""

    def _python(self, identity: Identity | None) -> PythonEntry:
        return PythonEntry(executable=str(self.layout.executable), boot=str(self.layout.boot_file))

    def _nproc_relative(self, identity: Identity | None) -> bool:
        return False

    def _signal_of(self, returncode: int) -> int | None:
        return -returncode if returncode < 0 else None

    # ---- probing

    @classmethod
    def probe(cls, layout: PythonLayout | None = None) -> tuple[bool, str]:
        """(usable, reason): a tiny Python program through this runtime, once per process."""
        with cls._probe_lock:
            if cls.name not in cls._probes:
                cls._probes[cls.name] = cls._probe(layout)
            return cls._probes[cls.name]

    @classmethod
    def _probe(cls, layout: PythonLayout | None) -> tuple[bool, str]:
        try:
            runtime = cls(layout)
            result = runtime.run(
                "import coworkenv, json; print(json.dumps({'ok': True}))", limits=Limits(wall_s=30, cpu_s=10)
            )
        except (OSError, SandboxError, subprocess.SubprocessError) as exc:
            return False, f"{type(exc).__name__}: {exc}"
        if result.ok and '"ok": true' in result.stdout:
            return True, ""
        reason = (result.stderr or result.stdout).strip().splitlines()
        return False, (reason[-1] if reason else f"exit status {result.exit_code}")[:500]

    # ---- launching

    def _launch(
        self,
        kind: Literal["module", "source", "argv"],
        argv: list[str],
        *,
        limits: Limits,
        scratch: Path,
        identity: Identity | None,
        worker: bool,
        stdin: Any,
        stdout: Any,
        stderr: Any,
        module: str = "",
        file: str = "",
    ) -> subprocess.Popen[bytes]:
        python = self._python(identity)
        nproc = limits.processes + (4 if worker else 0)
        rlimits: list[tuple[str, int, int]] = [
            ("RLIMIT_AS", limits.memory_mb << 20, limits.memory_mb << 20),
            ("RLIMIT_FSIZE", limits.file_size_mb << 20, limits.file_size_mb << 20),
            ("RLIMIT_NOFILE", limits.open_files, limits.open_files),
            ("RLIMIT_CORE", 0, 0),
            ("RLIMIT_NPROC", nproc, nproc),
        ]
        if not worker:  # a worker sets RLIMIT_CPU per task (it lives through many)
            rlimits.append(("RLIMIT_CPU", *limits.cpu_rlimit()))
        cfg = {
            "rlimits": rlimits,
            "nproc_relative": self._nproc_relative(identity),
            "cwd": str(scratch),
            "site": [str(p) for p in self.layout.site_dirs],
            "path": [str(p) for p in self.layout.extra_paths],
            "kind": kind,
            "argv": argv,
            "module": module,
            "file": file,
            "seccomp": seccomp_filter().hex(),
        }
        inner = [python.executable, "-s", "-P", "-B", python.boot, json.dumps(cfg)]
        env = sandbox_env(scratch, python.env)
        try:
            return self._popen(
                inner,
                scratch=scratch,
                identity=identity,
                env=env,
                stdin=stdin,
                stdout=stdout,
                stderr=stderr,
                pass_fds=python.fds,
            )
        finally:
            for fd in python.fds:
                os.close(fd)

    def spawn_worker(
        self,
        *,
        limits: Limits | None = None,
        scratch: Path | None = None,
        warm: Sequence[str] = (),
        imports: Sequence[str] = (),
        args: Sequence[str] = (),
    ) -> SandboxProcess:
        """Start a long-lived worker (`python -m coworkenv.sandbox.worker`) talking JSON lines on stdin/stdout.

        `imports`: modules the worker imports before it is ready (those that register the jobs it will be asked to
        run); `warm`: jobs whose warm-up it runs then."""
        limits = limits or Limits()
        identity = allocate_identity()
        own = scratch is None
        scratch = Path(tempfile.mkdtemp(prefix="coworkenv-worker-")) if scratch is None else Path(scratch)
        prepare_scratch(scratch, identity)
        stderr_file = tempfile.TemporaryFile(prefix="coworkenv-worker-stderr-")
        argv = [
            WORKER_MODULE,
            "--limits",
            limits.model_dump_json(),
            "--scratch",
            str(scratch),
            "--runtime",
            self.name,
            "--nproc",
            "relative" if self._nproc_relative(identity) else "absolute",
        ]
        for module in imports:
            argv += ["--import", module]
        for name in warm:
            argv += ["--warm", name]
        argv += list(args)
        try:
            popen = self._launch(
                "module",
                argv,
                limits=limits,
                scratch=scratch,
                identity=identity,
                worker=True,
                module=WORKER_MODULE,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr_file,
            )
        except BaseException:
            stderr_file.close()
            if own:
                remove_tree(scratch)
            raise
        return SandboxProcess(
            popen=popen, runtime=self.name, scratch=scratch, identity=identity, own_scratch=own, stderr_file=stderr_file
        )

    def run(
        self,
        target: str | Sequence[str],
        *,
        stdin: bytes | str | None = None,
        limits: Limits | None = None,
        scratch: Path | str | None = None,
    ) -> RunResult:
        """Run Python source (a str) or an argv (a sequence; argv[0] found on the sandbox's PATH) to completion.

        `scratch` is the writable working directory (a fresh one, removed afterwards, when None; a given one is
        handed to the sandbox's uid). Never raises for what the target does: limits end up in the RunResult.
        """
        limits = limits or Limits()
        identity = allocate_identity()
        own = scratch is None
        scratch_path = Path(tempfile.mkdtemp(prefix="coworkenv-run-")) if scratch is None else Path(scratch).resolve()
        proc: SandboxProcess | None = None
        try:
            prepare_scratch(scratch_path, identity)
            if isinstance(target, str):
                source = scratch_path / SOURCE_FILE
                source.write_text(target, encoding="utf-8")
                if identity is not None:
                    os.chown(source, identity.uid, identity.gid)
                kind: Literal["source", "argv"] = "source"
                argv = [str(source)]
            else:
                kind, argv = "argv", [str(a) for a in target]
                if not argv:
                    raise ValueError("empty argv")
            popen = self._launch(
                kind,
                argv,
                limits=limits,
                scratch=scratch_path,
                identity=identity,
                worker=False,
                file=argv[0],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
            proc = SandboxProcess(popen=popen, runtime=self.name, scratch=scratch_path, identity=identity)
            data = stdin.encode("utf-8") if isinstance(stdin, str) else (stdin or b"")
            return self._collect(proc, data, limits)
        finally:
            if proc is not None:
                proc.close()
            if own:
                remove_tree(scratch_path)

    def _collect(self, proc: SandboxProcess, data: bytes, limits: Limits) -> RunResult:
        popen = proc.popen
        assert popen.stdin is not None and popen.stdout is not None and popen.stderr is not None
        start = time.monotonic()
        out, err = Capture(limits.output_bytes), Capture(limits.output_bytes)
        pidfd = os.pidfd_open(popen.pid)
        exited = False
        try:
            captures = ((popen.stdout.fileno(), out), (popen.stderr.fileno(), err))
            exited, timed_out, overflow = pump(pidfd, captures, start + limits.wall_s, popen.stdin, data)
        finally:
            if not exited:
                try:
                    os.killpg(popen.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            _pid, status, usage = os.wait4(popen.pid, 0)
            os.close(pidfd)
            popen.returncode = os.waitstatus_to_exitcode(status)
        cpu = usage.ru_utime + usage.ru_stime
        returncode = popen.returncode
        sig = self._signal_of(returncode)
        reason: ResourceKind | None = None
        if timed_out:
            reason = "wall"
        elif overflow:
            reason = "output"
        elif sig in (signal.SIGXCPU,) or (sig == signal.SIGKILL and cpu >= limits.cpu_rlimit()[0] - 0.5):
            reason = "cpu"
        elif sig == signal.SIGXFSZ:
            reason = "file_size"
        elif sig is None and returncode in EXIT_REASONS:
            reason = EXIT_REASONS[returncode]
        return RunResult(
            runtime=self.name,
            exit_code=None if sig is not None else returncode,
            killed_by_signal=sig,
            stdout=out.text(),
            stderr=err.text(),
            stdout_truncated=out.overflow,
            stderr_truncated=err.overflow,
            timed_out=timed_out,
            resource_exceeded=reason,
            wall_s=time.monotonic() - start,
            cpu_s=cpu,
        )
