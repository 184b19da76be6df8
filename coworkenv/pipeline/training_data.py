"""What an evaluation run gives training (docs/design/agents-and-rollouts.md, "Rollouts"): its successful trials as
`sft` rows (rejection sampling) and its preference pairs (DPO), from the run or its published release. Refused for a
benchmark suite: training on a held-out suite would contaminate it."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from coworkenv.data.root import DataRoot
from coworkenv.errors import CoworkEnvError
from coworkenv.pipeline.evaluation import EVAL_DIR, suite_info, suite_tasks
from coworkenv.pipeline.rundir import RunDir

if TYPE_CHECKING:
    from coworkenv.rollout.pairs import PairSet
    from coworkenv.rollout.trial_record import TrialRecord


def training_suite(run: RunDir) -> dict[str, Any]:
    """The run's suite, refused when it is a benchmark: training on a held-out suite would contaminate it."""
    from coworkenv.rollout.pairs import refuse_benchmark

    suite = suite_info(run)
    refuse_benchmark(suite.get("kind"), f"run {run.run_id!r} (suite {suite.get('name')!r})")
    return suite


def recorded_trials(run: RunDir) -> list[TrialRecord]:
    """The run's trial records; a run that has none has not been played."""
    from coworkenv.rollout import read_trials

    records = read_trials(run.file(EVAL_DIR, "trials.jsonl"))
    if not records:
        raise CoworkEnvError(f"run {run.run_id!r} has no trials: run it first")
    return records


def sft_from_run(run: RunDir, dest: str | os.PathLike[str], *, threshold: float | None = None) -> dict[str, Any]:
    """Rejection sampling (docs/design/agents-and-rollouts.md, "Rollouts"): the run's successful trials, deduplicated, as `sft` rows in
    one Parquet file. Refused for a benchmark suite."""
    from coworkenv.rollout.rejection import DEFAULT_THRESHOLD, write_sft

    training_suite(run)
    records = recorded_trials(run)
    rows = write_sft(records, suite_tasks(run), dest, threshold=DEFAULT_THRESHOLD if threshold is None else threshold)
    return {"trials": len(records), "sft_rows": rows, "path": str(dest)}


def pairs_from_run(run: RunDir, *, min_score_gap: float) -> PairSet:
    """Preference pairs (docs/design/agents-and-rollouts.md, "Rollouts") of an evaluation run, published or not: its trials, with the
    oracle rollouts of the task release it evaluated (none for a suite file) as the fallback chosen side. Refused for a
    benchmark suite."""
    from coworkenv.rollout import trajectory_rows
    from coworkenv.rollout.pairs import oracle_trajectories, preference_pairs

    suite = training_suite(run)
    specs = suite_tasks(run)
    trials = trajectory_rows(recorded_trials(run), specs)
    release = suite.get("release_id")
    oracle = oracle_trajectories(run.data_root, release) if release else []
    return preference_pairs(trials, specs, oracle=oracle, min_score_gap=min_score_gap, source=run.run_id)


def eval_pairs(
    ref: str, data_root: str | os.PathLike[str] | DataRoot | None = None, *, min_score_gap: float
) -> PairSet:
    """One evaluation's preference pairs: from its release (kind `eval`) or, before it is published, its run."""
    from coworkenv.data.reader import complete_manifest
    from coworkenv.data.root import open_root
    from coworkenv.rollout.pairs import release_pairs

    root = open_root(data_root)
    if complete_manifest(root, ref) is not None:
        return release_pairs(root, ref, min_score_gap=min_score_gap)
    run = RunDir.open(ref, root)
    if not run.file(EVAL_DIR, "config.json").exists():
        raise CoworkEnvError(f"{ref!r} is neither an evaluation release nor an evaluation run under {root.url}")
    return pairs_from_run(run, min_score_gap=min_score_gap)
