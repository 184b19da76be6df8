"""One rollout: a policy plays a task's episode, the episode is graded, and the result becomes a `trajectories` row."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from coworkenv.data.build import trajectory_row
from coworkenv.grading.play import play
from coworkenv.spec.task import TaskSpec


def rollout_row(spec: TaskSpec, agent: str = "oracle", trial: int = 0) -> dict[str, Any]:
    """The task played by `agent` in a live episode and graded: its `trajectories` row."""
    run = play(spec, agent=agent)
    return trajectory_row(spec, run.trajectory, run.grade, agent=agent, trial=trial)


def rollout_rows(specs: Iterable[TaskSpec], agent: str = "oracle", progress: Callable[[int], None] | None = None) -> list[dict[str, Any]]:
    rows = []
    for spec in specs:
        rows.append(rollout_row(spec, agent))
        if progress is not None:
            progress(1)
    return rows
