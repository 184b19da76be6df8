"""The worker pool under both runtimes: order, progress, fresh state per task, replacing workers, closing."""

from __future__ import annotations

import json
import time

import pytest
from pydantic import ValidationError

from coworkenv.registry import UnknownName
from coworkenv.sandbox.limits import SandboxError
from coworkenv.sandbox.pool import JobResult, WorkerPool, run_jobs
from coworkenv.sandbox.rlimit import RlimitRuntime
from coworkenv.sandbox.runtimes import Runtime
from tests.support.sandbox import LIMITS


def test_run_jobs_keeps_order_and_reports_progress(runtime: Runtime):
    seen: list[int] = []
    payloads = [f"payload-{i}" for i in range(25)]
    results = run_jobs("echo", payloads, workers=2, runtime=runtime, limits=LIMITS, progress=seen.append)
    assert [r.index for r in results] == list(range(25))
    assert [r.output for r in results] == payloads
    assert all(isinstance(r, JobResult) and r.ok and r.worker_restarts == 0 for r in results)
    assert sum(seen) == 25
    assert run_jobs("echo", [], runtime=runtime) == []
    with pytest.raises(UnknownName, match="did you mean 'exec'"):
        run_jobs("exce", ["print(1)"], runtime=runtime)


def test_job_results_are_frozen():
    result = JobResult(index=0, ok=True, output=1)
    with pytest.raises(ValidationError):
        result.ok = False  # type: ignore[misc]


def test_no_state_leaks_from_one_task_to_the_next(runtime: Runtime):
    first = (
        "import builtins, os, sys\n"
        "builtins.LEAKED = 'yes'\nsys.modules['json'].dumps = lambda *a, **k: 'forged'\n"
        "open('left-behind.txt', 'w').write('x')\nprint(os.getcwd())"
    )
    second = "import builtins, json, os\nprint(json.dumps({'leaked': hasattr(builtins, 'LEAKED'), 'files': os.listdir('.'), 'cwd': os.getcwd()}))"
    with WorkerPool(workers=1, runtime=runtime, limits=LIMITS) as pool:
        a, b = pool.map("exec", [first, second])
        echo = pool.map("echo", ["still honest"])[0]
        assert pool.started == 1 and pool.restarts == 0  # one long-lived worker served all of them
    assert a.ok and b.ok, (a, b)
    seen = json.loads(b.output["stdout"])
    assert seen == {"leaked": False, "files": [], "cwd": seen["cwd"]}
    assert seen["cwd"] != a.output["stdout"].strip()  # a fresh scratch dir per task
    assert echo.output == "still honest"


class _BrokenRuntime(RlimitRuntime):
    def _python(self, identity):  # type: ignore[no-untyped-def]
        return super()._python(identity).model_copy(update={"executable": "/nonexistent/python3"})


def test_a_runtime_that_cannot_start_workers_raises():
    with pytest.raises(SandboxError):
        run_jobs("echo", ["x"], runtime=_BrokenRuntime(), limits=LIMITS)


def test_a_worker_that_dies_between_jobs_is_replaced(runtime: Runtime):
    with WorkerPool(workers=1, runtime=runtime, limits=LIMITS) as pool:
        pid = pool.map("exec", ["import os; print(os.getppid())"])[0]
        assert pid.ok
        # the task's process kills its own worker (same uid): that task fails, the next one gets a new worker
        killed = pool.map("exec", ["import os, signal; os.kill(os.getppid(), signal.SIGKILL)"])[0]
        after = pool.map("echo", ["next"])[0]
    assert not killed.ok and killed.error_code == "sandbox_crash" and killed.worker_restarts == 1
    assert after.ok and after.output == "next"
    assert pool.restarts == 1 and pool.started == 2


def test_closing_the_pool_abandons_running_jobs_quickly(runtime: Runtime):
    import threading

    pool = WorkerPool(workers=2, runtime=runtime, limits=LIMITS.model_copy(update={"wall_s": 60}))
    pool.start()
    outcome: list[BaseException | list[JobResult]] = []

    def run() -> None:
        try:
            outcome.append(pool.map("exec", ["import time\ntime.sleep(50)"] * 4))
        except BaseException as exc:  # noqa: BLE001
            outcome.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    time.sleep(0.5)
    start = time.monotonic()
    pool.close()
    thread.join(timeout=20)
    assert time.monotonic() - start < 10
    assert len(outcome) == 1 and isinstance(outcome[0], SandboxError)
    with pytest.raises(SandboxError, match="closed"):
        pool.map("echo", ["x"])


def test_a_task_over_its_budget_costs_only_its_budget_and_the_batch_goes_on(runtime: Runtime):
    """The worker stops the task at its budget (not at the pool's Limits.wall_s), answers sandbox_timeout and is
    keeps serving (a forked task) or is replaced (an inline one, `tests/fuzz/test_hostile_specs.py`); the tasks after it run
    as usual."""
    sleeper = "import time\ntime.sleep(60)"
    limits = LIMITS.model_copy(update={"wall_s": 60, "cpu_s": 30})
    with WorkerPool(workers=1, runtime=runtime, limits=limits) as pool:
        results = pool.map("exec", ["pass", sleeper, "pass"], budget_s=1)
        assert [r.ok for r in results] == [True, False, True]
        assert results[1].error_code == "sandbox_timeout" and "budget of 1 s" in results[1].error
        assert results[1].duration_s < limits.wall_s
        assert pool.map("echo", ["after"])[0].output == "after"


def test_the_worker_refuses_a_budget_that_is_not_a_number_of_seconds():

    from coworkenv.sandbox.worker import JobServer

    server = JobServer.__new__(JobServer)  # only `handle`'s checks are exercised: no protocol channel needed
    server.limits = LIMITS
    for budget in (0, -1, "5", True, 10**9):
        response, restart = server.handle({"id": 1, "job": "echo", "payload": "x", "budget_s": budget})
        assert (response["error_code"], restart) == ("bad_request", False), budget
