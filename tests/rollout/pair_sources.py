"""Where preference pairs come from, for the pairs, DPO and CLI tests: a task release that holds the oracle's rollouts as
its `trajectories` (what synthesis publishes), and evaluations of an agent on it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from coworkenv.data.build import release_tables
from coworkenv.data.layout import Manifest
from coworkenv.data.publisher import publish_release
from coworkenv.pipeline.config import EvaluationConfig
from coworkenv.pipeline.evaluation import evaluate
from coworkenv.rollout import run_trials, trajectory_rows
from coworkenv.spec.task import TaskSpec
from tests.support.releases import passing_validation


def publish_with_oracle(root: Path, tasks: Sequence[TaskSpec], run_id: str, kind: str = "tasks") -> Manifest:
    """A release of these tasks whose `trajectories` are the oracle's rollouts, one per task."""
    oracle = run_trials(tasks, "oracle", runtime="none", workers=1)
    tables = release_tables(
        list(tasks), [passing_validation(t) for t in tasks], trajectories=trajectory_rows(oracle, tasks)
    )
    return publish_release(tables, data_root=root, run_id=run_id, parent=None, config={}, kind=kind)  # type: ignore[arg-type]


def evaluate_on(root: Path, agent: str, suite: str, run_id: str, trials: int = 2) -> Manifest:
    """The whole evaluation run (prepare → trials → build → gate → publish) of `agent` on `suite`, in-process."""
    config = EvaluationConfig(agent=agent, suite=suite, trials=trials, runtime="none", workers=1)
    return evaluate(config, run_id, root)
