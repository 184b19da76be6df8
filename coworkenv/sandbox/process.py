"""A started sandbox and its pipes: `SandboxProcess` (one sandboxed process tree, killed as a whole), `Capture` (the
bounded bytes read from a pipe), `pump` (the select loop that reads pipes until the process exits, a deadline passes or
an output limit is hit), and the scratch directories sandboxes work in."""

from __future__ import annotations

import os
import selectors
import shutil
import signal
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from coworkenv.sandbox.identity import Identity, kill_uid

_CHUNK = 65536


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
            kill_uid(self.identity)

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
                chunk = os.read(fd, _CHUNK)
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


def pump(
    pidfd: int,
    captures: Sequence[tuple[int, Capture]],
    deadline: float,
    stdin: IO[bytes] | None = None,
    data: bytes = b"",
) -> tuple[bool, bool, bool]:
    """Read each pipe into its capture (and write `data` to `stdin`, closing it after) until the process behind
    `pidfd` exits, `deadline` (monotonic) passes, or a capture overflows: (exited, timed_out, overflow).

    Leaves the process as it is: killing and reaping it is the caller's, who knows whether its group must go too.
    After an exit, what is still in the pipes is read without waiting for EOF (a left-behind child may hold them open).
    """
    sel = selectors.DefaultSelector()
    sel.register(pidfd, selectors.EVENT_READ, None)
    for fd, capture in captures:
        os.set_blocking(fd, False)
        sel.register(fd, selectors.EVENT_READ, capture)
    if stdin is not None:
        os.set_blocking(stdin.fileno(), False)
        if data:
            sel.register(stdin.fileno(), selectors.EVENT_WRITE, stdin)
        else:
            stdin.close()
    view, exited, timed_out = memoryview(data), False, False
    try:
        while not exited:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                timed_out = True
                break
            for key, _ in sel.select(remaining):
                if key.data is None:
                    exited = True
                elif isinstance(key.data, Capture):
                    if not key.data.read_from(key.fd):
                        sel.unregister(key.fd)
                else:
                    view = _feed(key, view, sel)
            if any(capture.overflow for _, capture in captures):
                return False, False, True
        if exited:
            for fd, capture in captures:
                capture.read_from(fd, drain=True)
    finally:
        sel.close()
    return exited, timed_out, any(capture.overflow for _, capture in captures)


def _feed(key: selectors.SelectorKey, view: memoryview, sel: selectors.BaseSelector) -> memoryview:
    try:
        n = os.write(key.fd, view[:_CHUNK])
    except (BrokenPipeError, BlockingIOError) as exc:
        n = len(view) if isinstance(exc, BrokenPipeError) else 0
    view = view[n:]
    if not view:
        sel.unregister(key.fd)
        key.data.close()
    return view


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


def prepare_scratch(scratch: Path, identity: Identity | None) -> None:
    """Make the scratch dir (mode 0700) and hand it to the sandbox's uid, if it has one of its own."""
    scratch.mkdir(parents=True, exist_ok=True)
    if identity is not None:
        os.chown(scratch, identity.uid, identity.gid)
    os.chmod(scratch, 0o700)
