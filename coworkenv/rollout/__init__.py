"""Rollouts (docs/design/agents-and-rollouts.md, "Rollouts"): agents played in tasks' episodes, graded and recorded.

`run_trials` (the engine) runs N tasks × k trials of any agent and keeps one `TrialRecord` per trial in a resumable
trials file; `rollout_row` / `rollout_rows` / the `rollout` sandbox job are the synthesis pipeline's oracle rollouts
(`trajectories` rows); `sft.sft_from_trials` turns an agent's own successes into SFT rows (rejection sampling);
`pairs.preference_pairs` pairs a passing and a failing trial of each task for DPO.
"""

from coworkenv.rollout.engine import run_trials
from coworkenv.rollout.oracle_rollouts import rollout_row, rollout_rows
from coworkenv.rollout.rows import eval_rows, record_eval_row, record_trajectory_row, trajectory_rows
from coworkenv.rollout.trial_record import TrialRecord, trial_seed
from coworkenv.rollout.trials_file import TrialStore, read_trials

__all__ = [
    "TrialRecord",
    "TrialStore",
    "eval_rows",
    "read_trials",
    "record_eval_row",
    "record_trajectory_row",
    "rollout_row",
    "rollout_rows",
    "run_trials",
    "trajectory_rows",
    "trial_seed",
]
