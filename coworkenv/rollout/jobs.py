"""The `rollout` sandbox job: a task's raw spec in, its oracle rollout's `trajectories` row out. Specs may be written by
an LLM, so their episodes run in the sandbox like the battery's."""

from __future__ import annotations

import json
from typing import Any

from coworkenv.sandbox.jobs import job


def _warm() -> None:
    import coworkenv.rollout.play  # noqa: F401  (the episode and grading modules a rollout needs)


@job("rollout", warmup=_warm)
def rollout(payload: str) -> dict[str, Any]:
    """`{"spec": <TaskSpec JSON text>, "agent": "oracle"}` → the rollout's `trajectories` row."""
    from coworkenv.rollout.play import rollout_row
    from coworkenv.spec.task import TaskSpec

    request = json.loads(payload)
    return rollout_row(TaskSpec.model_validate_json(request["spec"]), agent=request.get("agent", "oracle"))
