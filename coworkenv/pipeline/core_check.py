"""Check task files end to end (the `coworkenv check` command and the `coworkenv_core_check` DAG): the
grading-consistency gate, then the oracle and null trajectories graded by replay. Trusted files only: in-process."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field, field_validator

from coworkenv.airflow_env import ROOT_ENV, project_root
from coworkenv.grading.consistency import consistency_gate
from coworkenv.grading.play import play, play_null
from coworkenv.grading.score import grade_trajectory
from coworkenv.pipeline.settings import form_section
from coworkenv.sandbox.budget import BudgetExceeded, wall_budget
from coworkenv.spec.io import load_tasks
from coworkenv.spec.task import TaskSpec


def resolve_tasks_path(path: str) -> Path:
    """A relative tasks path read against `COWORKENV_ROOT` (the profiles set it), else the checkout the package runs
    from (`airflow_env.project_root`)."""
    candidate = Path(path).expanduser()
    return candidate if candidate.is_absolute() else Path(os.environ.get(ROOT_ENV) or project_root()) / candidate


WHAT_TO_CHECK = "What to check"
SHARDS = "Shards"


class CoreCheckConfig(BaseModel):
    """What a core check proves (the `coworkenv_core_check` DAG): every task of a task file or folder."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    form_sections: ClassVar[tuple[str, ...]] = (WHAT_TO_CHECK, SHARDS)

    tasks_path: str = Field(
        "examples/tasks",
        min_length=1,
        title="Tasks",
        description="A .json or .jsonl task file, or a folder of them. Relative paths are resolved against "
        "COWORKENV_ROOT (the repository root by default).",
        json_schema_extra=form_section(WHAT_TO_CHECK),
    )
    fail_on_gate: bool = Field(
        True,
        title="Fail on gate",
        description="Fail the run when any task fails the grading-consistency gate.",
        json_schema_extra=form_section(WHAT_TO_CHECK),
    )
    shard_size: int = Field(
        8,
        ge=1,
        le=10000,
        title="Shard size",
        description="Tasks per mapped check_shard task.",
        json_schema_extra=form_section(SHARDS),
    )

    @field_validator("tasks_path")
    @classmethod
    def _tasks_are_there(cls, path: str) -> str:
        resolved = resolve_tasks_path(path)
        if resolved.is_dir():
            return path
        if not resolved.is_file():
            raise ValueError(f"{path}: no such task file or folder")
        if resolved.suffix not in (".json", ".jsonl"):
            raise ValueError(f"{path}: a task file is .json or .jsonl")
        return path

    def tasks(self) -> Path:
        return resolve_tasks_path(self.tasks_path)


class TaskReport(BaseModel):
    model_config = ConfigDict(frozen=True)

    task_id: str
    family: str
    capabilities: list[str]
    gate_passed: bool
    oracle_score: float
    null_score: float
    failures: list[str]


def check_task(spec: TaskSpec, budget_s: float | None = None) -> TaskReport:
    """Gate the task, then run the oracle and null agents and grade their trajectories by replay; a task that runs
    past `budget_s` (in-process, on the main thread) fails with the reason instead of holding up the others."""
    try:
        with wall_budget(budget_s, spec.id):
            gate = consistency_gate(spec)
            scores = {
                name: grade_trajectory(spec, run.trajectory).score
                for name, run in (("oracle", play(spec)), ("null", play_null(spec)))
            }
    except BudgetExceeded as exc:
        return TaskReport(
            task_id=spec.id,
            family=spec.family,
            capabilities=list(spec.capabilities),
            gate_passed=False,
            oracle_score=0.0,
            null_score=0.0,
            failures=[str(exc)],
        )
    failures = list(gate.failures)
    if scores["oracle"] != gate.oracle_score:
        failures.append(f"replayed oracle trajectory scores {scores['oracle']}, live run {gate.oracle_score}")
    return TaskReport(
        task_id=spec.id,
        family=spec.family,
        capabilities=list(spec.capabilities),
        gate_passed=not failures,
        oracle_score=scores["oracle"],
        null_score=scores["null"],
        failures=failures,
    )


def check_tasks(
    tasks: Iterable[TaskSpec], progress: Callable[[], None] | None = None, budget_s: float | None = None
) -> list[TaskReport]:
    reports = []
    for spec in tasks:
        reports.append(check_task(spec, budget_s))
        if progress is not None:
            progress()
    return reports


def check_task_files(path: str | Path) -> list[TaskReport]:
    return check_tasks(load_tasks(path))


def shard_task_refs(path: str | Path, size: int) -> list[list[dict[str, str]]]:
    """Validate every task under `path` and split `{path, task_id}` references into shards of `size`."""
    root = Path(path)
    files = sorted(p for p in root.iterdir() if p.suffix in (".json", ".jsonl")) if root.is_dir() else [root]
    load_tasks(root)  # validates every spec and rejects duplicate ids across files
    refs = [{"path": str(file), "task_id": spec.id} for file in files for spec in load_tasks(file)]
    return [refs[i : i + size] for i in range(0, len(refs), size)]


def load_task_refs(refs: list[dict[str, str]]) -> list[TaskSpec]:
    by_file: dict[str, dict[str, TaskSpec]] = {}
    for ref in refs:
        if ref["path"] not in by_file:
            by_file[ref["path"]] = {spec.id: spec for spec in load_tasks(ref["path"])}
    return [by_file[ref["path"]][ref["task_id"]] for ref in refs]


def summarize_reports(reports: list[dict]) -> dict:
    """Counts over report dicts (as they travel through XCom): overall, per family, and the failures."""
    failed = [r for r in reports if not r["gate_passed"]]
    families: dict[str, dict[str, int]] = {}
    for r in reports:
        counts = families.setdefault(r["family"], {"tasks": 0, "gate_passed": 0})
        counts["tasks"] += 1
        counts["gate_passed"] += int(r["gate_passed"])
    return {
        "tasks": len(reports),
        "gate_passed": len(reports) - len(failed),
        "gate_failed": len(failed),
        "oracle_perfect": sum(r["oracle_score"] == 1.0 for r in reports),
        "null_zero": sum(r["null_score"] == 0.0 for r in reports),
        "families": dict(sorted(families.items())),
        "failed": [{"task_id": r["task_id"], "failures": r["failures"]} for r in failed],
    }
