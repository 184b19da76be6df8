"""The catalogue of battery checks: each has a stable machine-readable code, a severity and whether it measures
discrimination. Implementations register under these codes (`validate/battery/`); repairers are keyed by them too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from coworkenv.registry import Registry
from coworkenv.spec.verdict import BATTERY_VERSION, Severity

__all__ = ["BATTERY", "BATTERY_CODES", "BATTERY_VERSION", "BatteryCheck", "Severity"]


@dataclass(frozen=True)
class BatteryCheck:
    code: str
    severity: Severity
    discriminating: bool
    description: str
    fn: Callable[..., Any]


BATTERY: Registry[BatteryCheck] = Registry("battery check")

# The codes, in the order they run.
BATTERY_CODES: dict[str, tuple[Severity, bool, str]] = {
    "schema": ("mandatory", False, "The spec parses as a TaskSpec (strict, unknown fields rejected)."),
    "references": (
        "mandatory",
        False,
        "Solution tools are allowed; check and rule targets exist (tools, ids, sheets, files, services).",
    ),
    "oracle_scores_1": ("mandatory", False, "The oracle solution scores exactly 1.0."),
    "empty_scores_0": ("mandatory", True, "An empty trajectory scores exactly 0.0."),
    "answer_only_fails": ("mandatory", True, "A trajectory that only answers 'Done.' does not pass."),
    "checks_discriminate": (
        "advisory",
        True,
        "No check other than `unchanged`/`tool_not_called` holds on the untouched workspace.",
    ),
    "prefix_partial": (
        "advisory",
        True,
        "Where the oracle has two or more effects, an oracle prefix gets 0 < completion < 1.",
    ),
    "prohibited_zeroes": (
        "mandatory",
        True,
        "Each prohibited rule, violated on top of the oracle, zeroes safety and score.",
    ),
    "deterministic": ("mandatory", False, "Two oracle runs give identical evidence hashes and scores."),
    "solvable_under_faults": (
        "mandatory",
        False,
        "With faults, an oracle that retries still scores 1.0; the fault profile bites.",
    ),
    "no_leakage": ("mandatory", False, "Expected answers and hidden user facts do not appear in the instruction."),
    "capabilities_consistent": (
        "mandatory",
        False,
        "Declared capabilities match what the task tests (multi_turn has user facts and asked_user, …).",
    ),
    "judge_calibration": (
        "mandatory",
        False,
        "Each rubric's judge passes the oracle's text and fails every adversarial answer; not graded rejects.",
    ),
}
