"""The battery as a sandboxed `validate` job: the pool's workers import `coworkenv.validate.jobs`, which registers it."""

from __future__ import annotations

import pytest

from coworkenv.sandbox.limits import Limits
from coworkenv.sandbox.pool import run_jobs
from coworkenv.sandbox.runtimes import Runtime
from coworkenv.validate.jobs import JOB_NAME
from tests.support.sandbox import RUNTIME_NAMES, usable_runtime


@pytest.fixture(params=RUNTIME_NAMES)
def runtime(request: pytest.FixtureRequest) -> Runtime:
    return usable_runtime(request.param)


def test_pool_validates_tasks_like_the_in_process_battery(runtime: Runtime):
    from coworkenv.synth.generate import GenerateRequest, generate
    from coworkenv.validate.battery import validate_spec_json

    specs, _ = generate(GenerateRequest(n=6, seed=1))
    payloads = [s.to_json() for s in specs] + ['{"id": "broken", "not": "a spec"}', "not json at all"]
    results = run_jobs(
        JOB_NAME, payloads, workers=2, runtime=runtime, limits=Limits(wall_s=30, cpu_s=20, memory_mb=512)
    )
    assert all(r.ok for r in results), [r for r in results if not r.ok][:1]
    assert [r.output for r in results] == [validate_spec_json(p) for p in payloads]
    assert [r.output["valid"] for r in results] == [True] * 6 + [False, False]
