"""Episodes, evidence, trajectories and replay."""

from coworkenv.env.episode import Episode
from coworkenv.env.evidence import Evidence
from coworkenv.env.runner import Policy, initial_messages, run_episode
from coworkenv.env.trajectory import Trajectory, replay

__all__ = ["Episode", "Evidence", "Policy", "Trajectory", "initial_messages", "replay", "run_episode"]
