"""One rollout: a policy plays a task's episode, the episode is graded, and the result becomes a `trajectories` row."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

from coworkenv.agents import make_policy
from coworkenv.data.build import trajectory_row
from coworkenv.grading.play import play
from coworkenv.spec.task import TaskSpec


def rollout_row(spec: TaskSpec, agent: str = "oracle", trial: int = 0) -> dict[str, Any]:
    """The task played by `agent` in a live episode and graded: its `trajectories` row."""
    run = play(spec, policy=make_policy(agent, spec))
    return trajectory_row(spec, run.trajectory, run.grade, agent=agent, trial=trial)


def rollout_rows(
    specs: Iterable[TaskSpec], agent: str = "oracle", progress: Callable[[int], None] | None = None
) -> list[dict[str, Any]]:
    rows = []
    for spec in specs:
        rows.append(rollout_row(spec, agent))
        if progress is not None:
            progress(1)
    return rows


def sandboxed_rollouts(
    specs: Iterable[TaskSpec],
    agent: str = "oracle",
    *,
    workers: int = 2,
    runtime: str = "auto",
    progress: Callable[..., None] | None = None,
    budget_s: float | None = None,
) -> list[Any]:
    """One `rollout` job per spec, in the sandbox: the JobResults (output: the `trajectories` row), in order. With a
    judge active, rubrics are graded from its verdicts on the pairs the spec foresees (`judge.sandbox_jobs`)."""
    import coworkenv.rollout.jobs  # noqa: F401  (registers the job)
    from coworkenv.judge.sandbox_jobs import run_jobs_judged
    from coworkenv.validate.judging import spec_pairs

    texts = [spec.to_json() for spec in specs]
    payloads = [json.dumps({"spec": text, "agent": agent}) for text in texts]
    return run_jobs_judged(
        "rollout",
        payloads,
        [spec_pairs(text) for text in texts],
        workers=workers,
        runtime=runtime,
        progress=progress,
        budget_s=budget_s,
    )
