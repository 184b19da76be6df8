"""Sandbox runtimes: where untrusted task content (LLM-written specs, executable content) is evaluated.

Two implementations of one `Runtime` interface:

- `BwrapRuntime` (bubblewrap, used automatically when `bwrap` works here): new network, pid, ipc, uts and cgroup
  namespaces (no network at all, only the sandbox's own processes in `/proc`), a root that holds nothing but the
  read-only system (`/usr`), the Python installation, the venv and the `coworkenv` package source, a private
  read-only `/tmp`, a minimal `/dev`, and the writable per-sandbox scratch dir; `--die-with-parent`,
  `--new-session`, `--clearenv`, all capabilities dropped; rlimits applied inside.
- `RlimitRuntime` (fallback without namespaces): `setsid` + rlimits (CPU, address space, file size, open files,
  processes) + a wall-clock timeout + SIGKILL of the whole process group (and, when we are root, of every process
  of the sandbox's own uid). It does NOT isolate the network nor hide world-readable files: see README.

Privileges. Started as root, both runtimes run the sandboxed code as an unprivileged uid/gid of its own, allocated
per sandbox from `COWORKENV_SANDBOX_UID_BASE` (default 1_600_000_000; one uid per live sandbox, no supplementary
groups, no capabilities, no_new_privs). With a uid of its own RLIMIT_NPROC counts only that sandbox's processes (it
is never enforced for root), files of root (`/root`, secrets with mode 600, `/etc/shadow`, other processes'
`/proc/<pid>/environ`) are unreadable, and at teardown `kill -9 -1` run as that uid reaches every process the
sandbox left behind, even ones that escaped its process group with `setsid`. bwrap runs privileged (as root,
without a user namespace: it would map the sandbox back to uid 0) and `setpriv` drops to that uid inside, after
the mounts. Started as an ordinary user, the code keeps that user's uid: bwrap then makes a user namespace (where
RLIMIT_NPROC counts per sandbox); the fallback limits processes relative to the user's current count.

Sandboxed Python starts from `BOOT` below: it applies the rlimits, sets no_new_privs, adds the venv's site dirs
and then runs a module (a worker), a source file, or execs an argv.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import selectors
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from coworkenv.errors import CoworkEnvError

RuntimeName = Literal["auto", "bwrap", "rlimit"]
ResourceKind = Literal["cpu", "memory", "wall", "output", "file_size", "processes"]

# Exit statuses BOOT uses for a Python target that died of a resource limit (so the parent can tell why).
EXIT_MEMORY = 86
EXIT_PROCESSES = 87
EXIT_FILE_SIZE = 88
_EXIT_REASONS: dict[int, ResourceKind] = {EXIT_MEMORY: "memory", EXIT_PROCESSES: "processes", EXIT_FILE_SIZE: "file_size"}

UID_BASE_ENV = "COWORKENV_SANDBOX_UID_BASE"
DEFAULT_UID_BASE = 1_600_000_000
_UID_SPAN_BITS = 31  # uid = base + (pid << 9 | counter); pids < 2**22

WORKER_MODULE = "coworkenv.validate.worker"
SOURCE_FILE = "_sandbox_main.py"


class SandboxError(CoworkEnvError):
    """A runtime that cannot be used here, or a sandbox that would not start."""


class Limits(BaseModel):
    """Resource limits for one sandboxed task (per-task in a worker pool, per process for `Runtime.run`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    cpu_s: float = Field(30.0, gt=0, description="CPU seconds one task may use (RLIMIT_CPU of the process that runs it); more is `sandbox_timeout`.")
    memory_mb: int = Field(
        1024, ge=64, description="Address space of each sandboxed process in MiB (RLIMIT_AS); more is `sandbox_memory`. `import torch` needs ~4096."
    )
    file_size_mb: int = Field(64, ge=1, description="Largest file a task may write, in MiB (RLIMIT_FSIZE); more is `sandbox_output`.")
    open_files: int = Field(256, ge=16, description="Open file descriptors per process (RLIMIT_NOFILE).")
    output_bytes: int = Field(
        1_000_000,
        ge=1024,
        description="Most bytes kept of stdout, of stderr and of a job's JSON output; more is `sandbox_output` (the task is killed).",
    )
    wall_s: float = Field(
        60.0, gt=0, description="Wall-clock seconds one task may take; more is `sandbox_timeout` (the task, or its worker, is killed)."
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


# --------------------------------------------------------------------------------------------------------------
# What runs first inside every sandbox (python -s -P -B -c BOOT CONFIG_JSON). Kept free of third-party imports.

BOOT = r"""
import json, os, resource, sys
cfg = json.loads(sys.argv[1])
def _own_processes():
    n, uid = 0, os.getuid()
    for d in os.listdir('/proc'):
        if d.isdigit():
            try:
                n += os.stat('/proc/' + d).st_uid == uid
            except OSError:
                pass
    return n
for name, soft, hard in cfg['rlimits']:
    if name == 'RLIMIT_NPROC' and cfg.get('nproc_relative'):
        soft, hard = soft + _own_processes(), hard + _own_processes()
    resource.setrlimit(getattr(resource, name), (soft, hard))
try:
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS
    if cfg.get('seccomp'):
        class _Prog(ctypes.Structure):
            _fields_ = [('len', ctypes.c_ushort), ('filter', ctypes.c_void_p)]
        _code = bytes.fromhex(cfg['seccomp'])
        _buf = ctypes.create_string_buffer(_code, len(_code))
        _prog = _Prog(len(_code) // 8, ctypes.addressof(_buf))
        if libc.prctl(22, 2, ctypes.byref(_prog), 0, 0) == 0:  # PR_SET_SECCOMP, SECCOMP_MODE_FILTER
            os.environ['COWORKENV_SANDBOX_SECCOMP'] = '1'
except Exception:
    pass
os.umask(0o077)
os.chdir(cfg['cwd'])
import site
for p in cfg['site']:
    site.addsitedir(p)
sys.path[:0] = cfg['path']
kind = cfg['kind']
if kind == 'argv':
    os.execvp(cfg['argv'][0], cfg['argv'])
sys.argv = list(cfg['argv'])
if kind == 'module':
    import runpy
    runpy.run_module(cfg['module'], run_name='__main__', alter_sys=True)
    sys.exit(0)
import errno, traceback
path = cfg['file']
try:
    with open(path, encoding='utf-8') as fh:
        code = compile(fh.read(), path, 'exec')
    exec(code, {'__name__': '__main__', '__file__': path, '__builtins__': __builtins__})
except MemoryError:
    traceback.print_exc(limit=5)
    os._exit(86)
except SystemExit:
    raise
except BaseException as exc:
    traceback.print_exc(limit=20)
    sys.stderr.flush()
    if isinstance(exc, OSError) and exc.errno == errno.EFBIG:
        os._exit(88)
    if (isinstance(exc, OSError) and exc.errno == errno.EAGAIN) or "can't start new thread" in str(exc):
        tb = exc.__traceback__
        while tb is not None and tb.tb_next is not None:
            tb = tb.tb_next
        import linecache
        line = linecache.getline(tb.tb_frame.f_code.co_filename, tb.tb_lineno) if tb else ''
        if 'fork' in line or 'Popen' in line or 'spawn' in line or 'thread' in str(exc).lower():
            os._exit(87)
    os._exit(1)
""".strip()


# --------------------------------------------------------------------------------------------------------------
# A small seccomp filter (defence in depth, both runtimes): no new user namespaces (the sandbox could otherwise
# become "root" of a namespace of its own and mount things, a favourite road to kernel bugs), no kernel keyrings,
# BPF, perf events, userfaultfd, io_uring or module/kexec loading, and no syscalls of a foreign ABI (i386, x32),
# whose numbers would slip past the filter. clone3 answers ENOSYS (its flags cannot be inspected): glibc then
# uses clone, whose flags are checked. Only x86_64 and aarch64; elsewhere no filter is installed.

_AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
_SYSCALLS = {  # unshare, clone, clone3, then the refused ones
    "x86_64": (272, 56, 435, (248, 249, 250, 321, 298, 323, 425, 426, 427, 246, 320, 175, 313, 176)),
    "aarch64": (97, 220, 435, (217, 218, 219, 280, 241, 282, 425, 426, 427, 104, 294, 105, 273, 106)),
}
_CLONE_NEWUSER = 0x10000000


def seccomp_filter(machine: str | None = None) -> bytes:
    """The BPF program (struct sock_filter[]) for this machine's architecture; b"" where there is none."""
    import platform
    import struct

    machine = machine or platform.machine()
    if machine not in _SYSCALLS:
        return b""
    unshare, clone, clone3, refused = _SYSCALLS[machine]
    allow, enosys, eperm = 0x7FFF0000, 0x00050000 | 38, 0x00050000 | 1
    ld, jeq, jge, jset, ret = 0x20, 0x15, 0x35, 0x45, 0x06
    prog: list[tuple[int, Any, Any, int]] = [(ld, 0, 0, 4), (jeq, 0, "enosys", _AUDIT_ARCH[machine]), (ld, 0, 0, 0)]
    if machine == "x86_64":
        prog.append((jge, "enosys", 0, 0x40000000))  # x32 ABI
    prog += [(jeq, "flags", 0, unshare), (jeq, "flags", 0, clone), (jeq, "enosys", 0, clone3)]
    prog += [(jeq, "eperm", 0, nr) for nr in refused]
    prog.append((ret, 0, 0, allow))
    labels = {"flags": len(prog), "enosys": len(prog) + 3, "eperm": len(prog) + 4}
    prog += [(ld, 0, 0, 16), (jset, "eperm", 0, _CLONE_NEWUSER), (ret, 0, 0, allow), (ret, 0, 0, enosys), (ret, 0, 0, eperm)]
    out = b""
    for i, (code, jt, jf, k) in enumerate(prog):
        jt = labels[jt] - i - 1 if isinstance(jt, str) else jt
        jf = labels[jf] - i - 1 if isinstance(jf, str) else jf
        out += struct.pack("HBBI", code, jt, jf, k)
    return out


# --------------------------------------------------------------------------------------------------------------
# Who the sandboxed code runs as.


@dataclass(frozen=True)
class Identity:
    """The unprivileged uid/gid a sandbox runs as (only when we are root); no other process shares it."""

    uid: int
    gid: int


_uid_counter = itertools.count()
_uid_lock = threading.Lock()


def _allocate_identity() -> Identity | None:
    """A fresh uid/gid for one sandbox when running as root; None (keep our own uid) otherwise."""
    if os.geteuid() != 0:
        return None
    try:
        base = int(os.environ.get(UID_BASE_ENV, DEFAULT_UID_BASE))
    except ValueError as exc:
        raise SandboxError(f"{UID_BASE_ENV} must be an integer") from exc
    if not 1000 <= base <= (1 << 32) - 2 - (1 << _UID_SPAN_BITS):
        raise SandboxError(f"{UID_BASE_ENV}={base} leaves no room for sandbox uids (need 1000 ≤ base ≤ {(1 << 32) - 2 - (1 << _UID_SPAN_BITS)})")
    with _uid_lock:
        n = next(_uid_counter) % 512
    uid = base + (((os.getpid() % (1 << 22)) << 9) | n)
    return Identity(uid=uid, gid=uid)


def _kill_uid(identity: Identity) -> None:
    """SIGKILL every process of the sandbox's uid (`kill -9 -1` run as that uid reaches only its own processes)."""
    kill = shutil.which("kill", path="/usr/bin:/bin")
    if kill is None:
        return
    try:
        subprocess.run([kill, "-9", "-1"], user=identity.uid, group=identity.gid, extra_groups=[], env={"PATH": "/usr/bin:/bin"},
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=10, check=False, cwd="/")  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        pass


# --------------------------------------------------------------------------------------------------------------
# The Python the sandbox runs: base interpreter + venv site dirs + the coworkenv package.


@dataclass(frozen=True)
class PythonLayout:
    executable: Path  # the real base interpreter (not the venv symlink)
    base_prefix: Path
    venv_prefix: Path | None
    site_dirs: tuple[Path, ...]  # the venv's site-packages (processed for .pth files)
    package_dir: Path  # .../coworkenv
    extra_paths: tuple[Path, ...] = ()

    @classmethod
    def current(cls) -> PythonLayout:
        import site

        import coworkenv

        base_prefix = Path(os.path.realpath(sys.base_prefix))
        candidates = [getattr(sys, "_base_executable", "") or "", sys.executable]
        executable = next((Path(os.path.realpath(c)) for c in candidates if c and os.path.exists(c)), None)
        if executable is None:
            raise SandboxError("cannot find the Python interpreter to run in the sandbox")
        venv = Path(sys.prefix).resolve() if sys.prefix != sys.base_prefix else None
        site_dirs = tuple(Path(p) for p in site.getsitepackages() if os.path.isdir(p) and venv is not None and Path(p).resolve().is_relative_to(venv))
        package_dir = Path(coworkenv.__file__).resolve().parent
        return cls(executable=executable, base_prefix=base_prefix, venv_prefix=venv, site_dirs=site_dirs, package_dir=package_dir,
                   extra_paths=(package_dir.parent,))  # fmt: skip

    def read_only_roots(self) -> list[Path]:
        roots = [self.base_prefix, self.executable.parent]
        if self.venv_prefix is not None:
            roots.append(self.venv_prefix)
        roots += [*self.site_dirs, self.package_dir]
        return roots


def _world_reachable(path: Path) -> bool:
    """Whether a user with no relation to the owners can reach `path` (x on every ancestor, r+x on it)."""
    try:
        parts = [Path("/"), *[Path(*path.parts[: i + 1]) for i in range(1, len(path.parts))]]
        for p in parts[:-1]:
            if not os.stat(p).st_mode & stat.S_IXOTH:
                return False
        mode = os.stat(path).st_mode
        return bool(mode & stat.S_IROTH) and (not stat.S_ISDIR(mode) or bool(mode & stat.S_IXOTH))
    except OSError:
        return False


def sandbox_env(scratch: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The whole environment of a sandboxed process: nothing of ours (no credentials) is inherited."""
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(scratch),
        "TMPDIR": str(scratch),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PYTHONIOENCODING": "utf-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "USER": "sandbox",
        "LOGNAME": "sandbox",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        # one thread per numeric library: threads count against RLIMIT_NPROC (and results stay reproducible)
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }
    env.update(extra or {})
    return env


# --------------------------------------------------------------------------------------------------------------
# A started sandbox.


@dataclass
class SandboxProcess:
    """One sandboxed process tree (a worker, or one `run`). `kill()` ends all of it."""

    popen: subprocess.Popen[bytes]
    runtime: str
    scratch: Path
    identity: Identity | None
    own_scratch: bool = False
    stderr_file: IO[bytes] | None = None
    closed: bool = field(default=False, init=False)

    @property
    def pid(self) -> int:
        return self.popen.pid

    def alive(self) -> bool:
        return self.popen.poll() is None

    def kill(self) -> None:
        """SIGKILL the process group (the sandbox's session) and, when it has a uid of its own, every process of it."""
        try:
            os.killpg(self.popen.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self.popen.wait(timeout=10)
        except subprocess.TimeoutExpired:  # pragma: no cover - a process that survives SIGKILL
            pass
        if self.identity is not None:
            _kill_uid(self.identity)

    def stderr_tail(self, n: int = 2000) -> str:
        fh = self.stderr_file
        if fh is None:
            return ""
        try:
            fh.flush()
            size = fh.seek(0, os.SEEK_END)
            fh.seek(max(0, size - n))
            return fh.read().decode("utf-8", errors="replace")
        except (OSError, ValueError):
            return ""

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self.kill()
        for pipe in (self.popen.stdin, self.popen.stdout, self.popen.stderr):
            if pipe is not None:
                try:
                    pipe.close()
                except OSError:
                    pass
        if self.stderr_file is not None:
            self.stderr_file.close()
        if self.own_scratch:
            remove_tree(self.scratch)


def remove_tree(path: Path) -> None:
    """rmtree that also gets through directories a task made unreadable (chmod 000)."""

    def fix(func: Any, p: str, _exc: Any) -> None:
        try:
            os.chmod(os.path.dirname(p) or p, 0o700)
            if os.path.isdir(p) and not os.path.islink(p):
                os.chmod(p, 0o700)
            func(p)
        except OSError:
            pass

    if path.exists():
        shutil.rmtree(path, onerror=fix)
        if path.exists():
            shutil.rmtree(path, ignore_errors=True)


def _prepare_scratch(scratch: Path, identity: Identity | None) -> None:
    scratch.mkdir(parents=True, exist_ok=True)
    if identity is not None:
        os.chown(scratch, identity.uid, identity.gid)
    os.chmod(scratch, 0o700)


# --------------------------------------------------------------------------------------------------------------
# Runtimes.


class Runtime(ABC):
    """Runs untrusted things under limits: one-shot (`run`) or as a long-lived worker (`spawn_worker`)."""

    name: ClassVar[str]
    _probes: ClassVar[dict[str, tuple[bool, str]]] = {}
    _probe_lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, layout: PythonLayout | None = None):
        self.layout = layout or PythonLayout.current()

    # ---- what a runtime provides

    @abstractmethod
    def _popen(self, inner: list[str], *, scratch: Path, identity: Identity | None, env: dict[str, str],
               stdin: Any, stdout: Any, stderr: Any, pass_fds: Sequence[int]) -> subprocess.Popen[bytes]:  # fmt: skip
        """Start `inner` (a command line valid inside the sandbox) in the sandbox."""

    def _python(self, identity: Identity | None) -> tuple[str, dict[str, str], list[int], list[int]]:
        """(interpreter path inside, extra env, fds to pass, fds to close afterwards)."""
        return str(self.layout.executable), {}, [], []

    def _nproc_relative(self, identity: Identity | None) -> bool:
        return False

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
            result = runtime.run("import coworkenv, json; print(json.dumps({'ok': True}))", limits=Limits(wall_s=30, cpu_s=10))
        except (OSError, SandboxError, subprocess.SubprocessError) as exc:
            return False, f"{type(exc).__name__}: {exc}"
        if result.ok and '"ok": true' in result.stdout:
            return True, ""
        reason = (result.stderr or result.stdout).strip().splitlines()
        return False, (reason[-1] if reason else f"exit status {result.exit_code}")[:500]

    # ---- launching

    def _launch(self, kind: Literal["module", "source", "argv"], argv: list[str], *, limits: Limits, scratch: Path,
                identity: Identity | None, worker: bool, stdin: Any, stdout: Any, stderr: Any,
                module: str = "", file: str = "") -> subprocess.Popen[bytes]:  # fmt: skip
        python, py_env, pass_fds, close_fds = self._python(identity)
        rlimits: list[tuple[str, int, int]] = [
            ("RLIMIT_AS", limits.memory_mb << 20, limits.memory_mb << 20),
            ("RLIMIT_FSIZE", limits.file_size_mb << 20, limits.file_size_mb << 20),
            ("RLIMIT_NOFILE", limits.open_files, limits.open_files),
            ("RLIMIT_CORE", 0, 0),
            ("RLIMIT_NPROC", limits.processes + (4 if worker else 0), limits.processes + (4 if worker else 0)),
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
        inner = [python, "-s", "-P", "-B", "-c", BOOT, json.dumps(cfg)]
        env = sandbox_env(scratch, py_env)
        try:
            return self._popen(inner, scratch=scratch, identity=identity, env=env, stdin=stdin, stdout=stdout, stderr=stderr, pass_fds=pass_fds)
        finally:
            for fd in close_fds:
                os.close(fd)

    def spawn_worker(self, *, limits: Limits | None = None, scratch: Path | None = None, warm: Sequence[str] = (),
                     args: Sequence[str] = ()) -> SandboxProcess:  # fmt: skip
        """Start a long-lived worker (`python -m coworkenv.validate.worker`) talking JSON lines on stdin/stdout."""
        limits = limits or Limits()
        identity = _allocate_identity()
        own = scratch is None
        scratch = Path(tempfile.mkdtemp(prefix="coworkenv-worker-")) if scratch is None else Path(scratch)
        _prepare_scratch(scratch, identity)
        stderr_file = tempfile.TemporaryFile(prefix="coworkenv-worker-stderr-")
        argv = [WORKER_MODULE, "--limits", limits.model_dump_json(), "--scratch", str(scratch), "--runtime", self.name,
                "--nproc", "relative" if self._nproc_relative(identity) else "absolute"]  # fmt: skip
        for name in warm:
            argv += ["--warm", name]
        argv += list(args)
        try:
            popen = self._launch("module", argv, limits=limits, scratch=scratch, identity=identity, worker=True, module=WORKER_MODULE,
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr_file)  # fmt: skip
        except BaseException:
            stderr_file.close()
            if own:
                remove_tree(scratch)
            raise
        return SandboxProcess(popen=popen, runtime=self.name, scratch=scratch, identity=identity, own_scratch=own, stderr_file=stderr_file)

    def run(self, target: str | Sequence[str], *, stdin: bytes | str | None = None, limits: Limits | None = None,
            scratch: Path | str | None = None) -> RunResult:  # fmt: skip
        """Run Python source (a str) or an argv (a sequence; argv[0] found on the sandbox's PATH) to completion.

        `scratch` is the writable working directory (a fresh one, removed afterwards, when None; a given one is
        handed to the sandbox's uid). Never raises for what the target does: limits end up in the RunResult.
        """
        limits = limits or Limits()
        identity = _allocate_identity()
        own = scratch is None
        scratch_path = Path(tempfile.mkdtemp(prefix="coworkenv-run-")) if scratch is None else Path(scratch).resolve()
        proc: SandboxProcess | None = None
        try:
            _prepare_scratch(scratch_path, identity)
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
            popen = self._launch(kind, argv, limits=limits, scratch=scratch_path, identity=identity, worker=False, file=argv[0],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
            proc = SandboxProcess(popen=popen, runtime=self.name, scratch=scratch_path, identity=identity)
            data = stdin.encode("utf-8") if isinstance(stdin, str) else (stdin or b"")
            return self._collect(proc, data, limits)
        finally:
            if proc is not None:
                proc.close()
            if own:
                remove_tree(scratch_path)

    def _signal_of(self, returncode: int) -> int | None:
        return -returncode if returncode < 0 else None

    def _collect(self, proc: SandboxProcess, data: bytes, limits: Limits) -> RunResult:
        popen = proc.popen
        start = time.monotonic()
        deadline = start + limits.wall_s
        out, err = Capture(limits.output_bytes), Capture(limits.output_bytes)
        sel = selectors.DefaultSelector()
        pidfd = os.pidfd_open(popen.pid)
        assert popen.stdin is not None and popen.stdout is not None and popen.stderr is not None
        for pipe in (popen.stdin, popen.stdout, popen.stderr):
            os.set_blocking(pipe.fileno(), False)
        sel.register(pidfd, selectors.EVENT_READ, "exit")
        sel.register(popen.stdout.fileno(), selectors.EVENT_READ, out)
        sel.register(popen.stderr.fileno(), selectors.EVENT_READ, err)
        if data:
            sel.register(popen.stdin.fileno(), selectors.EVENT_WRITE, "stdin")
        else:
            popen.stdin.close()
        view, timed_out, overflow, exited = memoryview(data), False, False, False
        try:
            while not exited:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    timed_out = True
                    break
                for key, _ in sel.select(remaining):
                    if key.data == "exit":
                        exited = True
                    elif key.data == "stdin":
                        try:
                            n = os.write(key.fd, view[:65536])
                        except (BrokenPipeError, BlockingIOError) as exc:
                            n = len(view) if isinstance(exc, BrokenPipeError) else 0
                        view = view[n:]
                        if not view:
                            sel.unregister(key.fd)
                            popen.stdin.close()
                    elif not key.data.read_from(key.fd):
                        sel.unregister(key.fd)
                if out.overflow or err.overflow:
                    overflow = True
                    break
            if exited:  # what is still in the pipes (a left-behind child may hold them open: do not wait for EOF)
                out.read_from(popen.stdout.fileno(), drain=True)
                err.read_from(popen.stderr.fileno(), drain=True)
                overflow = out.overflow or err.overflow
        finally:
            sel.close()
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
        elif sig is None and returncode in _EXIT_REASONS:
            reason = _EXIT_REASONS[returncode]
        return RunResult(runtime=self.name, exit_code=None if sig is not None else returncode, killed_by_signal=sig,
                         stdout=out.text(), stderr=err.text(), stdout_truncated=out.overflow, stderr_truncated=err.overflow,
                         timed_out=timed_out, resource_exceeded=reason, wall_s=time.monotonic() - start, cpu_s=cpu)  # fmt: skip


class Capture:
    """Bytes read from a pipe, keeping at most `limit`; `overflow` once more arrived."""

    def __init__(self, limit: int):
        self.limit = limit
        self.chunks: list[bytes] = []
        self.size = 0
        self.overflow = False

    def read_from(self, fd: int, drain: bool = False) -> bool:
        """Read what is there; False at EOF."""
        while True:
            try:
                chunk = os.read(fd, 65536)
            except BlockingIOError:
                return True
            except OSError:
                return False
            if not chunk:
                return False
            room = self.limit - self.size
            if len(chunk) > room:
                self.overflow = True
                chunk = chunk[: max(room, 0)]
            if chunk:
                self.chunks.append(chunk)
                self.size += len(chunk)
            if self.overflow or not drain:
                return True

    def data(self) -> bytes:
        return b"".join(self.chunks)

    def text(self) -> str:
        return self.data().decode("utf-8", errors="replace")


class RlimitRuntime(Runtime):
    """Fallback: setsid + rlimits + wall clock + killpg, as an unprivileged uid of its own when we are root.

    Guarantees: CPU, memory, file-size, open-file, process and output limits; no inherited environment; when
    started as root, no root privileges (own uid, no groups, no capabilities, no_new_privs), so files not readable by
    "others" stay unreadable and teardown kills every process of that uid. Does NOT isolate the network (a task can
    connect to local services), nor hide world-readable files (the repo, /etc/passwd), nor stop writes to
    world-writable places (/tmp, /dev/shm), nor stop a task from seeing other processes in /proc.
    """

    name = "rlimit"

    def _nproc_relative(self, identity: Identity | None) -> bool:
        return identity is None  # our own uid has other processes: count from where it is

    def _python(self, identity: Identity | None) -> tuple[str, dict[str, str], list[int], list[int]]:
        layout = self.layout
        if identity is None or _world_reachable(layout.executable) and _world_reachable(layout.base_prefix / "lib"):
            return str(layout.executable), {}, [], []
        # The interpreter lives where the sandbox uid cannot reach it (e.g. /root/.pyenv): pass an O_PATH descriptor of
        # the installation and run it through /proc/self/fd/N (a process may always follow its own descriptors).
        try:
            rel = layout.executable.relative_to(layout.base_prefix)
        except ValueError as exc:
            raise SandboxError(f"the interpreter {layout.executable} is outside its installation {layout.base_prefix} and not reachable "
                               "by an unprivileged uid; install bubblewrap or run as a non-root user") from exc  # fmt: skip
        fd = os.open(layout.base_prefix, os.O_PATH | os.O_DIRECTORY)
        home = f"/proc/self/fd/{fd}"
        return f"{home}/{rel}", {"PYTHONHOME": home, "LD_LIBRARY_PATH": f"{home}/lib"}, [fd], [fd]

    def _popen(self, inner: list[str], *, scratch: Path, identity: Identity | None, env: dict[str, str],
               stdin: Any, stdout: Any, stderr: Any, pass_fds: Sequence[int]) -> subprocess.Popen[bytes]:  # fmt: skip
        ids: dict[str, Any] = {}
        if identity is not None:
            if not _world_reachable(scratch.parent):
                raise SandboxError(f"the scratch dir {scratch} is below a directory that an unprivileged uid cannot enter; "
                                   "put it somewhere like /tmp")  # fmt: skip
            ids = {"user": identity.uid, "group": identity.gid, "extra_groups": []}
        return subprocess.Popen(inner, stdin=stdin, stdout=stdout, stderr=stderr, env=env, cwd=str(scratch), start_new_session=True,
                                close_fds=True, pass_fds=tuple(pass_fds), umask=0o077, **ids)  # fmt: skip


class BwrapRuntime(Runtime):
    """bubblewrap: no network, only the sandbox's processes, a read-only system, a writable scratch dir; rlimits inside."""

    name = "bwrap"

    def __init__(self, layout: PythonLayout | None = None):
        super().__init__(layout)
        bwrap = shutil.which("bwrap")
        if bwrap is None:
            raise SandboxError("bubblewrap (bwrap) is not installed")
        self.bwrap = bwrap
        self.setpriv = shutil.which("setpriv", path="/usr/bin:/bin:/usr/sbin:/sbin")

    def _signal_of(self, returncode: int) -> int | None:
        if returncode < 0:
            return -returncode
        if 128 < returncode <= 128 + 64 and returncode not in _EXIT_REASONS:  # bwrap reports a child's death by signal as 128+N
            return returncode - 128
        return None

    def _mounts(self, scratch: Path) -> list[str]:
        args = ["--tmpfs", "/tmp"]  # first: binds below /tmp (the scratch dir) must come after it
        made: set[Path] = {Path("/"), Path("/tmp"), Path("/usr")}
        args += ["--ro-bind", "/usr", "/usr"]
        for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
            top = Path("/") / name
            if top.is_symlink():
                args += ["--symlink", os.readlink(top), str(top)]
            elif top.is_dir():
                args += ["--ro-bind", str(top), str(top)]
            made.add(top)
        for etc in ("/etc/ld.so.cache", "/etc/localtime"):
            if os.path.exists(etc):
                if Path("/etc") not in made:
                    args += ["--perms", "0755", "--dir", "/etc"]
                    made.add(Path("/etc"))
                args += ["--ro-bind", etc, etc]

        def parents(dest: Path) -> list[str]:
            out: list[str] = []
            for parent in reversed(dest.parents):
                if parent not in made and not any(parent.is_relative_to(m) for m in bound):
                    out += ["--perms", "0755", "--dir", str(parent)]
                    made.add(parent)
            return out

        bound: list[Path] = [Path("/usr")]
        for root in sorted({Path(p) for p in self.layout.read_only_roots()}, key=lambda p: len(p.parts)):
            if any(root.is_relative_to(b) for b in bound) or not root.exists():
                continue
            args += parents(root) + ["--ro-bind", str(root), str(root)]
            bound.append(root)
        args += parents(scratch) + ["--bind", str(scratch), str(scratch)]
        args += ["--proc", "/proc", "--dev", "/dev"]
        return args

    def _popen(self, inner: list[str], *, scratch: Path, identity: Identity | None, env: dict[str, str],
               stdin: Any, stdout: Any, stderr: Any, pass_fds: Sequence[int]) -> subprocess.Popen[bytes]:  # fmt: skip
        args = [self.bwrap, "--die-with-parent", "--new-session", "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts",
                "--unshare-cgroup-try", "--hostname", "sandbox", "--clearenv"]  # fmt: skip
        if identity is None:
            args += ["--unshare-user"]  # unprivileged: a user namespace (where RLIMIT_NPROC counts this sandbox only)
        for key, value in env.items():
            args += ["--setenv", key, value]
        args += ["--cap-drop", "ALL"]
        tail: list[str] = []
        if identity is not None:
            # Privileged bwrap (no user namespace: one would map the sandbox back to uid 0). setpriv, the only program
            # run with these three capabilities, drops to the sandbox's uid with no groups, capabilities or new privileges.
            if self.setpriv is None:
                raise SandboxError("running bwrap as root needs setpriv (util-linux) to drop to an unprivileged uid")
            args += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_SETPCAP"]
            tail = [self.setpriv, f"--reuid={identity.uid}", f"--regid={identity.gid}", "--clear-groups", "--no-new-privs",
                    "--inh-caps=-all", "--bounding-set=-all", "--"]  # fmt: skip
        args += self._mounts(scratch)
        args += tail + inner
        return subprocess.Popen(args, stdin=stdin, stdout=stdout, stderr=stderr, env={"PATH": "/usr/bin:/bin"}, cwd="/",
                                start_new_session=True, close_fds=True, pass_fds=tuple(pass_fds))  # fmt: skip


RUNTIMES: dict[str, type[Runtime]] = {"bwrap": BwrapRuntime, "rlimit": RlimitRuntime}
_default: Runtime | None = None
_default_lock = threading.Lock()


def bwrap_usable() -> tuple[bool, str]:
    """(usable, reason): bubblewrap installed and able to start a sandbox here (probed once per process)."""
    if shutil.which("bwrap") is None:
        return False, "bubblewrap (bwrap) is not installed"
    return BwrapRuntime.probe()


def default_runtime() -> Runtime:
    """bwrap when it works here (probed once), else the rlimit fallback."""
    global _default
    with _default_lock:
        if _default is None:
            ok, _reason = bwrap_usable()
            _default = BwrapRuntime() if ok else RlimitRuntime()
        return _default


def get_runtime(name: str | Runtime = "auto") -> Runtime:
    """ "auto" | "bwrap" | "rlimit" (or a Runtime, returned as is)."""
    if isinstance(name, Runtime):
        return name
    if name == "auto":
        return default_runtime()
    if name == "bwrap":
        ok, reason = bwrap_usable()
        if not ok:
            raise SandboxError(f"the bwrap sandbox is not usable here: {reason}")
        return BwrapRuntime()
    if name == "rlimit":
        return RlimitRuntime()
    raise SandboxError(f"unknown sandbox runtime {name!r}; choose auto, bwrap or rlimit")


__all__ = [
    "BOOT",
    "BwrapRuntime",
    "Capture",
    "Identity",
    "Limits",
    "PythonLayout",
    "RlimitRuntime",
    "RunResult",
    "Runtime",
    "SandboxError",
    "SandboxProcess",
    "bwrap_usable",
    "default_runtime",
    "get_runtime",
    "sandbox_env",
    "seccomp_filter",
]
