"""Grading: checks, the scoring formula, the consistency gate, pass@k / pass^k."""

from coworkenv.grading.consistency import GateResult, consistency_gate
from coworkenv.grading.metrics import pass_at_k, pass_hat_k
from coworkenv.grading.score import CheckResult, Grade, Violation, grade, grade_trajectory

__all__ = [
    "CheckResult", "GateResult", "Grade", "Violation", "consistency_gate", "grade", "grade_trajectory",
    "pass_at_k", "pass_hat_k",
]  # fmt: skip
