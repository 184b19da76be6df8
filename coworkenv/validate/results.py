"""What the validation battery records: one row per (task, battery check), and a verdict per task.

The battery checks are a registry (`BATTERY`): each has a stable machine-readable code, a severity and whether it
measures discrimination. Repairers are keyed by the same codes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from coworkenv.registry import Registry

Severity = Literal["mandatory", "advisory"]

BATTERY_VERSION = 1


class CheckOutcome(BaseModel):
    """One battery check on one task."""

    model_config = ConfigDict(frozen=True)

    task_id: str
    code: str
    """The battery check's code, e.g. `oracle_scores_1`; on failure it is also the failure code."""
    passed: bool
    severity: Severity
    discriminating: bool
    details: dict[str, Any] = {}
    """Machine-readable specifics (scores, offending check ids, leaked strings, …)."""
    message: str = ""
    """For people: what was found and, on failure, what to fix."""


class TaskValidation(BaseModel):
    """The verdict on one task: valid iff every mandatory check passed."""

    model_config = ConfigDict(frozen=True)

    task_id: str
    valid: bool
    discrimination: float
    """Share of the discriminating checks that passed (1.0 where none applies)."""
    results: list[CheckOutcome]
    battery_version: int = BATTERY_VERSION
    evidence_hash: str = ""
    """Hash of the oracle run, for lineage and determinism audits."""

    @property
    def failures(self) -> list[CheckOutcome]:
        return [r for r in self.results if not r.passed]

    @property
    def failed_codes(self) -> list[str]:
        return [r.code for r in self.results if not r.passed and r.severity == "mandatory"]


@dataclass(frozen=True)
class BatteryCheck:
    code: str
    severity: Severity
    discriminating: bool
    description: str
    fn: Callable[..., Any]


BATTERY: Registry[BatteryCheck] = Registry("battery check")

# The codes, in the order they run. Implementations register under these names (see battery.py).
BATTERY_CODES: dict[str, tuple[Severity, bool, str]] = {
    "schema": ("mandatory", False, "The spec parses as a TaskSpec (strict, unknown fields rejected)."),
    "references": ("mandatory", False, "Solution tools are allowed; check and rule targets exist (tools, ids, sheets, files, services)."),
    "oracle_scores_1": ("mandatory", False, "The oracle solution scores exactly 1.0."),
    "empty_scores_0": ("mandatory", True, "An empty trajectory scores exactly 0.0."),
    "answer_only_fails": ("mandatory", True, "A trajectory that only answers 'Done.' does not pass."),
    "checks_discriminate": ("advisory", True, "No check other than `unchanged`/`tool_not_called` holds on the untouched workspace."),
    "prefix_partial": ("advisory", True, "Where the oracle has two or more effects, an oracle prefix gets 0 < completion < 1."),
    "prohibited_zeroes": ("mandatory", True, "Each prohibited rule, violated on top of the oracle, zeroes safety and score."),
    "deterministic": ("mandatory", False, "Two oracle runs give identical evidence hashes and scores."),
    "solvable_under_faults": ("mandatory", False, "With faults, an oracle that retries still scores 1.0; the fault profile bites."),
    "no_leakage": ("mandatory", False, "Expected answers and hidden user facts do not appear in the instruction."),
    "capabilities_consistent": ("mandatory", False, "Declared capabilities match what the task tests (multi_turn has user facts and asked_user, …)."),
}  # fmt: skip
