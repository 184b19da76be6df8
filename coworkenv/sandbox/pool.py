"""A pool of long-lived sandboxed workers that run many jobs each (`run_jobs`, `WorkerPool`).

Each worker is a `python -m coworkenv.sandbox.worker` started through a sandbox `Runtime` (bwrap or the rlimit
fallback), so isolation costs one sandbox start per worker, not per task; inside, every request gets fresh objects
and a fresh scratch directory, and untrusted code runs in a child forked for that request only (see `forked.py`).
Workers are started with the modules that define the pool's jobs imported (see `jobs.py`).

One thread per worker feeds it jobs from a shared queue and waits for each answer with a deadline (the task's
wall-clock budget plus a grace period; the worker itself stops a task at its budget). A task that times out,
exhausts memory, crashes its worker, produces too much output or corrupts the protocol becomes a failed `JobResult`
(`sandbox_timeout`, `sandbox_memory`, `sandbox_crash`, `sandbox_output`, …) and its worker is killed (with everything
it started) and replaced: the pool carries on.
Only a worker that cannot be started at all (a broken runtime) raises `SandboxError`.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from coworkenv.sandbox.handle import GRACE_S, WorkerFailed, WorkerHandle
from coworkenv.sandbox.jobs import JOBS, job_modules, task_budget
from coworkenv.sandbox.limits import Limits, SandboxError
from coworkenv.sandbox.runtimes import Runtime
from coworkenv.sandbox.selection import get_runtime

STARTUP_TIMEOUT_S = 60.0
STARTUP_ATTEMPTS = 3


class JobResult(BaseModel):
    """The outcome of one job in a pool run."""

    model_config = ConfigDict(frozen=True)

    index: int = Field(description="Position of the payload in the input.")
    ok: bool
    output: Any = Field(None, description="The job's JSON-able output when ok.")
    error_code: str | None = Field(
        None,
        description="Machine-readable failure: sandbox_timeout, sandbox_memory, sandbox_crash, sandbox_output, sandbox_processes, job_error, …",
    )
    error: str = Field("", description="For people: what went wrong (may include the task's stderr tail).")
    worker_restarts: int = Field(0, description="Workers replaced because of this job (0 or 1).")
    duration_s: float = 0.0


@dataclass
class _Batch:
    job: str
    budget_s: float
    done: queue.SimpleQueue[JobResult | BaseException] = field(default_factory=queue.SimpleQueue)
    cancelled: bool = False


class WorkerPool:
    """K long-lived sandboxed workers, one feeding thread each. Use as a context manager; `map` runs a job over
    payloads, results in input order.

    `jobs`: the jobs the pool may run (default: every job registered when the pool is made); its workers import the
    modules that define them. `warm`: jobs whose warm-up each worker runs before it is ready.

    Each worker is started (and restarted) by its own feeding thread, which lives as long as the pool: bwrap's
    `--die-with-parent` ties a sandbox to the thread that started it.
    """

    def __init__(
        self,
        workers: int = 2,
        runtime: str | Runtime = "auto",
        limits: Limits | None = None,
        *,
        warm: Sequence[str] = (),
        jobs: Sequence[str] | None = None,
        startup_timeout_s: float = STARTUP_TIMEOUT_S,
    ):
        if workers < 1:
            raise ValueError("workers must be at least 1")
        self.size = workers
        self.runtime = get_runtime(runtime)
        self.limits = limits or Limits()
        self.warm = list(warm)
        self.imports = job_modules([*(JOBS.names() if jobs is None else jobs), *self.warm])
        """Modules each worker imports before it is ready: those that define the pool's jobs."""
        self.startup_timeout_s = startup_timeout_s
        self._tasks: queue.SimpleQueue[tuple[_Batch, int, str] | None] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._workers: dict[int, WorkerHandle] = {}
        self._lock = threading.Lock()
        self._broken: BaseException | None = None
        self._closed = False
        self.restarts = 0
        """Workers replaced so far (after a timeout, a crash, exhausted memory, …)."""
        self.started = 0
        """Workers started so far (initial ones and replacements)."""

    def __enter__(self) -> WorkerPool:
        self.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def start(self) -> None:
        """Start the feeding threads and their workers; returns once every worker is ready (or raises SandboxError)."""
        if self._closed:
            raise SandboxError("the worker pool is closed")
        if self._threads:
            return
        ready = [threading.Event() for _ in range(self.size)]
        errors: list[BaseException] = []
        for slot in range(self.size):
            thread = threading.Thread(
                target=self._feed, args=(slot, ready[slot], errors), name=f"sandbox-worker-{slot}", daemon=True
            )
            self._threads.append(thread)
            thread.start()
        for event in ready:
            event.wait()
        if errors:
            self.close()
            raise errors[0] if isinstance(errors[0], SandboxError) else SandboxError(str(errors[0]))

    def _spawn(self) -> WorkerHandle:
        last: BaseException | None = None
        for _ in range(STARTUP_ATTEMPTS):
            try:
                worker = WorkerHandle(
                    self.runtime,
                    self.limits,
                    warm=self.warm,
                    imports=self.imports,
                    startup_timeout_s=self.startup_timeout_s,
                )
            except (SandboxError, OSError) as exc:
                last = exc
                continue
            with self._lock:
                self.started += 1
            return worker
        raise last if isinstance(last, SandboxError) else SandboxError(f"cannot start a sandbox worker: {last}")

    def _feed(self, slot: int, ready: threading.Event, errors: list[BaseException]) -> None:
        worker: WorkerHandle | None = None
        try:
            try:
                worker = self._workers[slot] = self._spawn()
            except BaseException as exc:  # noqa: BLE001
                errors.append(exc)
                return
            finally:
                ready.set()
            while True:
                item = self._tasks.get()
                if item is None:
                    return
                batch, index, payload = item
                if batch.cancelled:
                    continue
                if self._closed:  # closing: what is still queued is not run
                    batch.done.put(SandboxError("the worker pool was closed"))
                    continue
                try:
                    if worker is None:
                        worker = self._workers[slot] = self._spawn()
                    result, keep = self._run_one(worker, index, batch, payload)
                    if not keep:
                        worker.close()
                        worker = None
                        with self._lock:
                            self.restarts += 1
                    batch.done.put(result)
                except BaseException as exc:  # noqa: BLE001 - a worker that cannot be (re)started: the run fails
                    self._broken = exc
                    batch.done.put(exc)
                    return
        finally:
            if worker is not None:
                worker.close()

    @staticmethod
    def _run_one(worker: WorkerHandle, index: int, batch: _Batch, payload: str) -> tuple[JobResult, bool]:
        """(result, whether the worker may serve on)."""
        start = time.monotonic()
        try:
            response = worker.request(index, batch.job, payload, batch.budget_s)
        except WorkerFailed as exc:
            return JobResult(
                index=index,
                ok=False,
                error_code=exc.code,
                error=str(exc),
                worker_restarts=1,
                duration_s=time.monotonic() - start,
            ), False
        keep = not response.get("restart")
        restarts = 0 if keep else 1
        duration = time.monotonic() - start
        if response.get("ok"):
            return JobResult(
                index=index, ok=True, output=response.get("output"), worker_restarts=restarts, duration_s=duration
            ), keep
        return JobResult(
            index=index,
            ok=False,
            error_code=str(response.get("error_code") or "sandbox_error"),
            error=str(response.get("error", "")),
            worker_restarts=restarts,
            duration_s=duration,
        ), keep

    def map(
        self,
        job: str,
        payloads: Sequence[str],
        progress: Callable[[int], None] | None = None,
        *,
        budget_s: float | None = None,
        on_result: Callable[[JobResult], None] | None = None,
    ) -> list[JobResult]:
        """Run `job` on every payload; results in input order. `on_result(result)`, then `progress(1)`, are called (in
        this thread) as each finishes, so a caller can keep each result as it comes (the rollout engine appends it).

        Each task gets `budget_s` wall-clock seconds (default: the job's own budget, else `Limits.wall_s`); the worker
        stops a task at its budget (`sandbox_timeout`) and is replaced, so a hostile task costs the batch that much."""
        missing = set(job_modules([job])) - set(self.imports)  # an unknown job name fails here, with a hint
        if missing:  # registered after the pool was made, or left out of `jobs`
            raise SandboxError(
                f"the pool's workers do not import {missing.pop()}, which defines the job {job!r}; name it in WorkerPool(jobs=...)"
            )
        payloads = list(payloads)
        if not payloads:
            return []
        self.start()
        if self._broken is not None:
            raise SandboxError(f"the worker pool is broken: {self._broken}")
        batch = _Batch(job, task_budget(job, self.limits.wall_s, budget_s))
        for i, payload in enumerate(payloads):
            self._tasks.put((batch, i, payload))
        results: list[JobResult | None] = [None] * len(payloads)
        received = 0
        try:
            while received < len(payloads):
                item = batch.done.get()
                if isinstance(item, BaseException):
                    raise (
                        item if isinstance(item, SandboxError) else SandboxError(f"the worker pool failed: {item}")
                    ) from item
                results[item.index] = item
                received += 1
                if on_result is not None:
                    on_result(item)
                if progress is not None:
                    progress(1)
        finally:
            batch.cancelled = True  # on an error (or KeyboardInterrupt) the rest of this batch is skipped
        return [r for r in results if r is not None]

    def close(self) -> None:
        """Stop the workers (killing whatever they run) and their threads."""
        if self._closed:
            return
        self._closed = True
        for _ in self._threads:
            self._tasks.put(None)
        for worker in list(self._workers.values()):
            worker.proc.kill()  # a job still running is abandoned (its thread sees the worker die and moves on)
        for thread in self._threads:
            thread.join(timeout=GRACE_S + 30)  # a worker killed above answers its thread at once


def run_jobs(
    job: str,
    payloads: Sequence[str],
    *,
    workers: int = 2,
    runtime: str | Runtime = "auto",
    limits: Limits | None = None,
    progress: Callable[[int], None] | None = None,
    budget_s: float | None = None,
    on_result: Callable[[JobResult], None] | None = None,
) -> list[JobResult]:
    """Run `job` over `payloads` in a fresh pool of sandboxed workers; one JobResult per payload, in order. `budget_s`:
    each task's wall-clock budget; `on_result`: called with each result as it finishes (see `WorkerPool.map`)."""
    payloads = list(payloads)
    spec = JOBS.get(job)
    if not payloads:
        return []
    warm = [job] if spec.warmup is not None else []
    with WorkerPool(
        workers=max(1, min(workers, len(payloads))), runtime=runtime, limits=limits, warm=warm, jobs=[job]
    ) as pool:
        return pool.map(job, payloads, progress=progress, budget_s=budget_s, on_result=on_result)
