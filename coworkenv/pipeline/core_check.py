"""Stage: prove a set of tasks end to end — consistency gate, oracle and null episodes, grades."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from coworkenv.agents import make_policy
from coworkenv.env.runner import run_episode
from coworkenv.grading.consistency import consistency_gate
from coworkenv.grading.score import grade_trajectory
from coworkenv.spec.io import load_tasks
from coworkenv.spec.task import TaskSpec


class TaskReport(BaseModel):
    model_config = ConfigDict(frozen=True)

    task_id: str
    family: str
    capabilities: list[str]
    gate_passed: bool
    oracle_score: float
    null_score: float
    failures: list[str]


def check_task(spec: TaskSpec) -> TaskReport:
    """Gate the task, then run the oracle and null agents and grade their trajectories by replay."""
    gate = consistency_gate(spec)
    scores = {}
    for agent in ("oracle", "null"):
        trajectory, _ = run_episode(spec, make_policy(agent, spec))
        scores[agent] = grade_trajectory(spec, trajectory).score
    failures = list(gate.failures)
    if scores["oracle"] != gate.oracle_score:
        failures.append(f"replayed oracle trajectory scores {scores['oracle']}, live run {gate.oracle_score}")
    return TaskReport(
        task_id=spec.id,
        family=spec.family,
        capabilities=list(spec.capabilities),
        gate_passed=not failures,
        oracle_score=scores["oracle"],
        null_score=scores["null"],
        failures=failures,
    )


def check_tasks(tasks: Iterable[TaskSpec], progress: Callable[[], None] | None = None) -> list[TaskReport]:
    reports = []
    for spec in tasks:
        reports.append(check_task(spec))
        if progress is not None:
            progress()
    return reports


def check_task_files(path: str | Path) -> list[TaskReport]:
    return check_tasks(load_tasks(path))
