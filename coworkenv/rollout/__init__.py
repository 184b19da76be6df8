"""Rollouts: running policies in a task's episodes and recording graded trajectories (`trajectories` rows).

Untrusted specs are rolled out in the sandbox (the `rollout` job, see `coworkenv.rollout.jobs`); `rollout_rows`
is the same work in-process, for trusted input.
"""

from coworkenv.rollout.play import rollout_row, rollout_rows

__all__ = ["rollout_row", "rollout_rows"]
