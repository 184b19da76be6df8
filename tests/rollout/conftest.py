"""Fixtures of the rollout tests: the example tasks and a small procedurally generated set."""

from __future__ import annotations

import pytest

from coworkenv.spec.io import load_task
from coworkenv.synth.generate import GenerateRequest, generate
from tests.support import EXAMPLES


@pytest.fixture(scope="session")
def examples():
    return [load_task(p) for p in sorted(EXAMPLES.glob("*.json"))]


@pytest.fixture(scope="session")
def generated():
    specs, _ = generate(GenerateRequest(n=40, seed=5))
    return specs


@pytest.fixture(scope="session")
def suite(examples, generated):
    return examples + generated
