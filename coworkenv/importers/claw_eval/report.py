"""What an import reports, per task and in sum: every criterion's status, whether an oracle was derived, and the
grading-consistency gate's verdict."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

Status = Literal["exact", "approximate", "rubric", "unexpressible"]
Gate = Literal["pass", "fail", "not graded", "not run"]


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class CriterionReport(Frozen):
    source: str
    """`scoring:<component name>` or `safety:<n>` (1-based) in task.yaml."""
    type: str
    """Claw-Eval's check type."""
    status: Status
    weight: float | None = None
    target: str = ""
    """What it became: a check kind (groups with their members), or `prohibited`."""
    reason: str = ""


class Counts(Frozen):
    total: int = 0
    exact: int = 0
    approximate: int = 0
    rubric: int = 0
    unexpressible: int = 0


class TaskReport(Frozen):
    folder: str
    task_id: str
    imported: bool
    why_not: str = ""
    criteria: list[CriterionReport] = []
    counts: Counts = Counts()
    oracle: bool = False
    oracle_note: str = ""
    """Why there is none, or which rubric checks the derived answer is unproven against."""
    gate: Gate = "not run"
    gate_failures: list[str] = []
    notes: list[str] = []
    """Fixtures, fields, tools and task.yaml keys that were dropped."""


class Summary(Frozen):
    tasks: int
    imported: int
    with_oracle: int
    gate_passed: int
    criteria: Counts
    exact_share: float
    """Exact criteria over all criteria, 0..1."""
    own_grader: bool = False
    """Each task is graded by its own grader.py (a sandboxed `code` check); the mapped criteria only derive oracles."""

    def line(self) -> str:
        c = self.criteria
        mapped = (
            f"{c.exact} of {c.total} criteria exact ({self.exact_share:.0%}), {c.approximate} approximate, {c.rubric} as rubric, "
            f"{c.unexpressible} not expressible"
        )
        tasks = f"{self.imported} of {self.tasks} tasks imported, {self.with_oracle} with an oracle, {self.gate_passed} pass the gate"
        if self.own_grader:
            return f"{tasks}; each graded by its own grader.py (the mapped criteria, {mapped}, only derive the oracles)"
        return (
            f"{mapped}; {tasks} (how the mapped checks agree with the benchmark's own graders: bench/claw_agreement.py)"
        )


class ImportReport(Frozen):
    source: str
    summary: Summary
    tasks: list[TaskReport]


def count(criteria: list[CriterionReport]) -> Counts:
    return Counts(
        total=len(criteria),
        **{s: sum(1 for c in criteria if c.status == s) for s in ("exact", "approximate", "rubric", "unexpressible")},
    )


def summarize(source: str, tasks: list[TaskReport], own_grader: bool = False) -> ImportReport:
    every = count([c for t in tasks for c in t.criteria])
    summary = Summary(
        tasks=len(tasks),
        imported=sum(t.imported for t in tasks),
        with_oracle=sum(t.oracle for t in tasks),
        gate_passed=sum(t.gate == "pass" for t in tasks),
        criteria=every,
        exact_share=round(every.exact / every.total, 4) if every.total else 0.0,
        own_grader=own_grader,
    )
    return ImportReport(source=source, summary=summary, tasks=tasks)
