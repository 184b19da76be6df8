"""The pool's side of one sandboxed worker process: `WorkerHandle` starts it, waits for its greeting, sends one
request at a time and reads the answer with a deadline (the task's wall clock plus a grace period) and a size cap.

A worker that does not answer in time, dies, or answers garbage raises `WorkerFailed` with the code the task gets
(`sandbox_timeout`, `sandbox_crash`, `sandbox_output`); the pool then replaces the worker.
"""

from __future__ import annotations

import json
import os
import selectors
import time
from collections.abc import Sequence
from typing import Any

from coworkenv.sandbox.limits import Limits, SandboxError
from coworkenv.sandbox.process import SandboxProcess
from coworkenv.sandbox.protocol import encode
from coworkenv.sandbox.runtimes import Runtime

GRACE_S = 2.0


class WorkerFailed(Exception):
    """The worker itself failed a request (not the job): it must be replaced."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code


class LineReader:
    """Reads newline-terminated lines from a pipe with a deadline and a size cap."""

    def __init__(self, fd: int):
        self.fd = fd
        self.buffer = bytearray()
        os.set_blocking(fd, False)
        self.selector = selectors.DefaultSelector()
        self.selector.register(fd, selectors.EVENT_READ)

    def readline(self, deadline: float, max_bytes: int) -> bytes:
        while True:
            end = self.buffer.find(b"\n")
            if end >= 0:
                line = bytes(self.buffer[:end])
                del self.buffer[: end + 1]
                return line
            if len(self.buffer) > max_bytes:
                raise WorkerFailed("sandbox_output", f"the worker's answer is over {max_bytes} bytes")
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError
            if not self.selector.select(remaining):
                continue
            try:
                chunk = os.read(self.fd, 1 << 20)
            except BlockingIOError:
                continue
            if not chunk:
                raise EOFError
            self.buffer += chunk

    def close(self) -> None:
        self.selector.close()


class WorkerHandle:
    """One started worker, ready to serve (the constructor waits for its greeting or raises SandboxError)."""

    def __init__(
        self, runtime: Runtime, limits: Limits, *, warm: Sequence[str], imports: Sequence[str], startup_timeout_s: float
    ):
        self.limits = limits
        self.proc: SandboxProcess = runtime.spawn_worker(limits=limits, warm=warm, imports=imports)
        assert self.proc.popen.stdout is not None and self.proc.popen.stdin is not None
        self.reader = LineReader(self.proc.popen.stdout.fileno())
        self.max_line = 16 * limits.output_bytes + (1 << 20)
        try:
            line = self.reader.readline(time.monotonic() + startup_timeout_s, self.max_line)
            hello = json.loads(line)
            if not isinstance(hello, dict) or not hello.get("ready"):
                raise ValueError(f"unexpected greeting {line[:200]!r}")
        except (TimeoutError, EOFError, ValueError, WorkerFailed) as exc:
            tail = self.proc.stderr_tail()
            self.close()
            what = (
                "did not start in time"
                if isinstance(exc, TimeoutError)
                else f"failed to start ({type(exc).__name__}: {exc})"
            )
            if (
                "PermissionError" in tail
            ):  # a checkout under a folder only its owner may enter (a 0700 home), started as root
                what += (
                    " because the sandbox's own user cannot read the code: put the checkout where every user may read it"
                    " (not under a private home folder), or choose --runtime none for tasks you trust"
                )
            raise SandboxError(
                f"a {runtime.name} sandbox worker {what}" + (f"; its stderr ends with:\n{tail}" if tail else "")
            ) from None
        self.info = hello

    def request(self, rid: int, job: str, payload: str, budget_s: float | None = None) -> dict[str, Any]:
        """The worker's answer to one task, which gets `budget_s` wall-clock seconds (default `Limits.wall_s`)."""
        stdin = self.proc.popen.stdin
        assert stdin is not None
        budget = self.limits.wall_s if budget_s is None else budget_s
        try:
            stdin.write(encode({"id": rid, "job": job, "payload": payload, "budget_s": budget}))
            stdin.flush()
        except (BrokenPipeError, OSError) as exc:
            raise WorkerFailed("sandbox_crash", f"the worker is gone ({exc})") from None
        deadline = (
            time.monotonic() + budget + GRACE_S
        )  # the worker stops the task at `budget`; this is for a worker stuck in C
        try:
            line = self.reader.readline(deadline, self.max_line)
        except TimeoutError:
            raise WorkerFailed(
                "sandbox_timeout",
                f"wall-clock limit exceeded (the task's budget of {budget:g} s); the worker was killed",
            ) from None
        except EOFError:
            raise WorkerFailed("sandbox_crash", "the worker died" + self._why()) from None
        try:
            response = json.loads(line)
        except ValueError:
            raise WorkerFailed(
                "sandbox_crash", f"the worker answered something that is not JSON: {line[:200]!r}"
            ) from None
        if not isinstance(response, dict) or response.get("id") != rid:
            raise WorkerFailed("sandbox_crash", f"the worker answered out of turn: {line[:200]!r}")
        return response

    def _why(self) -> str:
        try:
            self.proc.popen.wait(timeout=2)
        except Exception:  # noqa: BLE001
            pass
        code = self.proc.popen.returncode
        tail = self.proc.stderr_tail(1500).strip()
        status = f" (exit status {code})" if code is not None else ""
        return status + (f"; its stderr ends with:\n{tail}" if tail else "")

    def close(self) -> None:
        try:
            if self.proc.popen.stdin is not None:
                self.proc.popen.stdin.close()
        except OSError:
            pass
        self.reader.close()
        self.proc.close()
