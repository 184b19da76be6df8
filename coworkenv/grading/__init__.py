"""Grading: the scoring formula, the grading-consistency gate, playing and grading a trajectory, pass@k / pass^k.

Check kinds and their evaluators are in `coworkenv.checks`.
"""

from coworkenv.grading.consistency import ConsistencyVerdict, consistency_gate
from coworkenv.grading.passk import pass_at_k, pass_hat_k
from coworkenv.grading.play import Run, play
from coworkenv.grading.score import PASS_THRESHOLD, CheckResult, Grade, Violation, grade, grade_trajectory

__all__ = [
    "PASS_THRESHOLD",
    "CheckResult",
    "ConsistencyVerdict",
    "Grade",
    "Run",
    "Violation",
    "consistency_gate",
    "grade",
    "grade_trajectory",
    "pass_at_k",
    "pass_hat_k",
    "play",
]
