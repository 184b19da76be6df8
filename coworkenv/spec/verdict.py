"""What the validation battery records: one outcome per (task, battery check), and a verdict per task. A contract of
the core, so that releases (`data`) store verdicts without importing the battery that produces them (`validate`)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

Severity = Literal["mandatory", "advisory"]

BATTERY_VERSION = 1
"""Bumped when a battery check changes meaning, so stored verdicts say which battery judged them."""


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
