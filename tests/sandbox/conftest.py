"""Fixtures of the sandbox tests: every runtime test runs under both runtimes."""

from __future__ import annotations

import pytest

from coworkenv.sandbox.runtimes import Runtime
from tests.support.sandbox import RUNTIME_NAMES, usable_runtime


@pytest.fixture(params=RUNTIME_NAMES)
def runtime(request: pytest.FixtureRequest) -> Runtime:
    return usable_runtime(request.param)
