"""Episodes, evidence, trajectories and replay."""

from coworkenv.episode.episode import Episode
from coworkenv.episode.evidence import Evidence
from coworkenv.episode.runner import Policy, initial_messages, run_episode
from coworkenv.episode.session import EpisodeSession
from coworkenv.episode.trajectory import Trajectory, replay

__all__ = ["Episode", "EpisodeSession", "Evidence", "Policy", "Trajectory", "initial_messages", "replay", "run_episode"]
