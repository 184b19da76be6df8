"""Fixtures for the release tests: real generated tasks, validations, rollouts and the tables built from them."""

from __future__ import annotations

import pyarrow as pa
import pytest

from coworkenv.data.build import release_tables
from coworkenv.rollout import rollout_rows
from coworkenv.spec.task import TaskSpec
from coworkenv.spec.verdict import TaskValidation
from coworkenv.synth.generate import GenerateRequest, generate
from tests.support.releases import INVALID_INDEX, N_TASKS, passing_validation


@pytest.fixture(scope="session")
def specs() -> list[TaskSpec]:
    tasks, rejections = generate(GenerateRequest(n=N_TASKS, seed=11))
    assert not rejections and len(tasks) == N_TASKS
    return tasks


@pytest.fixture(scope="session")
def validations(specs: list[TaskSpec]) -> list[TaskValidation]:
    """All valid except one, to show that invalid tasks stay out of tasks/rl/sft but in validations."""
    return [passing_validation(s, valid=i != INVALID_INDEX) for i, s in enumerate(specs)]


@pytest.fixture(scope="session")
def trajectories(specs: list[TaskSpec]) -> list[dict]:
    """The oracle's rollouts, as the pipeline's rollout stage makes them."""
    return rollout_rows(specs)


@pytest.fixture(scope="session")
def tables(specs: list[TaskSpec], validations: list[TaskValidation], trajectories: list[dict]) -> dict[str, pa.Table]:
    repairs = [
        {
            "task_id": specs[0].id + "-r1",
            "parent_id": specs[0].id,
            "round": 1,
            "strategy": "rule:no_leakage",
            "codes_addressed": ["no_leakage"],
            "patch": [{"op": "replace", "path": "/instruction", "value": "x"}],
            "valid_after": True,
            "failed_codes_after": [],
        }
    ]
    return release_tables(specs, validations, repairs=repairs, trajectories=trajectories)
