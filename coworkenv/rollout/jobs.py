"""The rollout sandbox jobs. Specs may be written by an LLM, so their episodes run in the sandbox like the battery's:

- `rollout`: a task's raw spec in, its oracle rollout's `trajectories` row out (the synthesis pipeline's stage);
- `trial`: one trial of a `local` agent (`coworkenv.rollout.local.trial_payload`) in, its trial record out (the
  rollout engine).

Both grade rubrics from the parent's verdicts when the payload carries them (`coworkenv.judge.sandbox_jobs`).
"""

from __future__ import annotations

import json
from typing import Any

from coworkenv.judge.sandbox_jobs import judged_job
from coworkenv.sandbox.jobs import job


def _warm() -> None:
    import coworkenv.rollout.oracle_rollouts  # noqa: F401  (the episode and grading modules a rollout needs)


def _warm_trial() -> None:
    import coworkenv.rollout.local  # noqa: F401  (episodes, grading and the agents a trial needs)


@job("rollout", warmup=_warm)
def rollout(payload: str) -> Any:
    """`{"spec": <TaskSpec JSON text>, "agent": "oracle"}` → the rollout's `trajectories` row."""
    from coworkenv.rollout.oracle_rollouts import rollout_row
    from coworkenv.spec.task import TaskSpec

    request = json.loads(payload)
    return judged_job(
        request,
        lambda: rollout_row(TaskSpec.model_validate_json(request["spec"]), agent=request.get("agent", "oracle")),
    )


@job("trial", warmup=_warm_trial)
def trial(payload: str) -> Any:
    """A trial payload → the trial record (`TrialRecord` as JSON data)."""
    from coworkenv.rollout.local import trial_from_payload

    return judged_job(json.loads(payload), lambda: trial_from_payload(payload))
