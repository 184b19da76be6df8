"""The job registry: it records the module that defines each job, and a pool's workers import exactly those modules."""

from __future__ import annotations

import pytest

from coworkenv.registry import UnknownName
from coworkenv.sandbox.jobs import JOBS, job, job_modules
from coworkenv.sandbox.limits import SandboxError
from coworkenv.sandbox.pool import WorkerPool
from coworkenv.sandbox.rlimit import RlimitRuntime
from coworkenv.validate.jobs import JOB_NAME as VALIDATE


def test_the_registry_records_where_a_job_is_defined():
    assert JOBS.get("echo").module == JOBS.get("exec").module == "coworkenv.sandbox.jobs"
    assert JOBS.get("exec").fork and not JOBS.get("echo").fork
    assert JOBS.get(VALIDATE).module == "coworkenv.validate.jobs" and JOBS.get(VALIDATE).warmup is not None
    assert job_modules(["echo", "exec"]) == []  # a worker knows the sandbox's own jobs without being told
    assert job_modules(["echo", VALIDATE, VALIDATE]) == ["coworkenv.validate.jobs"]
    with pytest.raises(UnknownName, match="did you mean"):
        job_modules(["valdate"])


def test_a_job_defined_in_main_is_refused():
    def stray(payload: str) -> str:
        return payload

    stray.__module__ = "__main__"
    with pytest.raises(ValueError, match="__main__"):
        job("stray")(stray)
    assert "stray" not in JOBS


def test_a_pool_imports_the_modules_of_its_jobs_and_refuses_others():
    runtime = RlimitRuntime()  # nothing is started: the pool is never entered
    assert WorkerPool(runtime=runtime, jobs=[VALIDATE]).imports == ["coworkenv.validate.jobs"]
    assert WorkerPool(runtime=runtime, jobs=["echo"], warm=[VALIDATE]).imports == ["coworkenv.validate.jobs"]
    assert "coworkenv.validate.jobs" in WorkerPool(runtime=runtime).imports  # default: every job registered so far
    echo_only = WorkerPool(runtime=runtime, jobs=["echo"])
    assert echo_only.imports == []
    with pytest.raises(SandboxError, match="do not import coworkenv.validate.jobs"):
        echo_only.map(VALIDATE, ["{}"])


def test_a_task_budget_is_the_callers_else_the_jobs_else_the_wall_clock_limit():
    from coworkenv.sandbox.jobs import task_budget
    from coworkenv.validate.jobs import BATTERY_BUDGET_S

    assert JOBS.get(VALIDATE).budget_s == BATTERY_BUDGET_S == 5.0
    assert task_budget(VALIDATE, 60.0) == 5.0
    assert task_budget(VALIDATE, 60.0, 120) == 120.0  # a caller may ask for more than the job's own
    assert task_budget("echo", 60.0) == 60.0  # no budget of its own: the pool's Limits.wall_s
    with pytest.raises(ValueError, match="positive"):
        task_budget("echo", 60.0, 0)
    with pytest.raises(ValueError, match="positive"):
        job("negative-budget", budget_s=-1)
