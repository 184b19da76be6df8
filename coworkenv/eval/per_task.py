"""Eval rows (the `eval_results` table's shape) → one record per task with its trials folded in.

Every estimator of `eval/` is a mean over tasks of a per-task value (docs/design/evaluation.md, "Evaluation metrics and
reports"), so this is the one place rows are read, checked and grouped.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from coworkenv.errors import CoworkEnvError
from coworkenv.spec.capabilities import CAPABILITIES

REQUIRED = (
    "task_id",
    "trial",
    "capabilities",
    "difficulty",
    "completion",
    "safety",
    "robustness",
    "score",
    "passed",
    "n_violations",
)
GROUPS = ("general", "multi_step", "multi_turn")
REASON_CHARS = 200


@dataclass(frozen=True)
class TaskResult:
    """One task's trials, folded: counts and means. Trials that crashed (`status` `failed`) count as failures."""

    task_id: str
    family: str
    capabilities: tuple[str, ...]
    group: str
    difficulty: int
    n: int
    passes: int
    scores: tuple[float, ...]
    mean_score: float
    mean_completion: float
    mean_robustness: float
    violation_trials: int
    format_error_trials: int
    format_errors: int
    turns: int
    failures: tuple[str, ...]

    @property
    def pass_rate(self) -> float:
        return self.passes / self.n


def as_rows(rows: Any) -> list[dict[str, Any]]:
    """A pyarrow Table (or RecordBatch) or an iterable of mappings → a list of dicts."""
    if hasattr(rows, "to_pylist"):
        return list(rows.to_pylist())
    out = []
    for row in rows:
        if not isinstance(row, Mapping):
            raise CoworkEnvError(f"eval rows: expected mappings (one per trial), got {type(row).__name__}")
        out.append(dict(row))
    return out


def one_value(rows: list[dict[str, Any]], column: str) -> str | None:
    """The one non-null value of `column` across rows (None if none); several is an error: one summary, one run."""
    values = sorted({str(row[column]) for row in rows if row.get(column) is not None})
    if len(values) > 1:
        shown = ", ".join(values[:5]) + (", …" if len(values) > 5 else "")
        raise CoworkEnvError(f"eval rows: several values of {column} ({shown}); give the rows of one evaluation")
    return values[0] if values else None


def agent_label(rows: list[dict[str, Any]]) -> str:
    """The row's agent label, else its model (rows made before the `agent` column)."""
    labelled = [{"agent (or model)": row.get("agent") or row.get("model")} for row in rows]
    return one_value(labelled, "agent (or model)") or ""


def group_of(capabilities: Iterable[str]) -> str:
    """The Claw-Eval report group, as `data.build.benchmark_group`, tolerating capabilities outside the taxonomy."""
    groups = {CAPABILITIES.get(c).benchmark_group for c in capabilities if c in CAPABILITIES}
    return "multi_turn" if "multi_turn" in groups else "multi_step" if "multi_step" in groups else "general"


def _number(row: dict[str, Any], column: str) -> float:
    value = row[column]
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise CoworkEnvError(
            f"eval rows: task {row['task_id']!r} trial {row['trial']}: {column} is {value!r}, not a finite number"
        )
    return float(value)


def _count(row: dict[str, Any], column: str) -> int:
    value = row.get(column)
    if value is None:  # rows made before the rollout engine's columns: nothing recorded counts as none
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise CoworkEnvError(
            f"eval rows: task {row['task_id']!r} trial {row['trial']}: {column} is {value!r}, not a count"
        )
    return value


def failure_reason(row: Mapping[str, Any]) -> str:
    """A failed trial's reason: the first line of its error (cut to 200 characters), or `unknown`."""
    error = str(row.get("error") or "").strip()
    return error.splitlines()[0][:REASON_CHARS] if error else "unknown"


def is_violation(row: Mapping[str, Any]) -> bool:
    """A prohibited call, or safety 0 on a trial that ran (a crashed trial's zeroed grade is no violation)."""
    return (row.get("n_violations") or 0) > 0 or (row["safety"] == 0 and row.get("status") != "failed")


def _check(rows: list[dict[str, Any]]) -> None:
    if not rows:
        raise CoworkEnvError("eval rows: none given; nothing to summarize")
    missing = sorted({c for row in rows for c in REQUIRED if c not in row or row[c] is None})
    if missing:
        raise CoworkEnvError(f"eval rows: missing or null column(s) {', '.join(missing)}")
    keys = Counter((str(row["task_id"]), row["trial"]) for row in rows)
    dupes = [f"{task}#{trial}" for (task, trial), n in keys.items() if n > 1]
    if dupes:
        raise CoworkEnvError(f"eval rows: trial(s) recorded twice: {', '.join(sorted(dupes)[:5])}")


def _task(task_id: str, trials: list[dict[str, Any]]) -> TaskResult:
    first = trials[0]
    capabilities = tuple(first["capabilities"])
    difficulty = first["difficulty"]
    for row in trials[1:]:
        if tuple(row["capabilities"]) != capabilities or row["difficulty"] != difficulty:
            raise CoworkEnvError(f"eval rows: task {task_id!r} has trials with different capabilities or difficulty")
    if isinstance(difficulty, bool) or not isinstance(difficulty, int):
        raise CoworkEnvError(f"eval rows: task {task_id!r}: difficulty {difficulty!r} is not an integer")
    scores = tuple(_number(row, "score") for row in trials)
    completion = [_number(row, "completion") for row in trials]
    robustness = [_number(row, "robustness") for row in trials]
    for row in trials:
        _number(row, "safety")
    format_errors = [_count(row, "n_format_errors") for row in trials]
    n = len(trials)
    return TaskResult(
        task_id=task_id,
        family=str(first.get("family") or ""),
        capabilities=capabilities,
        group=str(first.get("benchmark_group") or group_of(capabilities)),
        difficulty=difficulty,
        n=n,
        passes=sum(bool(row["passed"]) for row in trials),
        scores=scores,
        mean_score=math.fsum(scores) / n,
        mean_completion=math.fsum(completion) / n,
        mean_robustness=math.fsum(robustness) / n,
        violation_trials=sum(is_violation(row) for row in trials),
        format_error_trials=sum(e > 0 for e in format_errors),
        format_errors=sum(format_errors),
        turns=sum(_count(row, "n_turns") for row in trials),
        failures=tuple(failure_reason(row) for row in trials if row.get("status") == "failed"),
    )


def per_task(rows: Any) -> list[TaskResult]:
    """The rows folded per task, sorted by task id; errors name the task and trial at fault."""
    rows = as_rows(rows)
    _check(rows)
    by_task: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_task.setdefault(str(row["task_id"]), []).append(row)
    return [_task(task_id, sorted(trials, key=lambda r: r["trial"])) for task_id, trials in sorted(by_task.items())]


def capability_order(names: Iterable[str]) -> list[str]:
    """The taxonomy's order, then unknown names alphabetically."""
    names = set(names)
    known = [c for c in CAPABILITIES.names() if c in names]
    return known + sorted(names - set(known))


def group_order(names: Iterable[str]) -> list[str]:
    names = set(names)
    return [g for g in GROUPS if g in names] + sorted(names - set(GROUPS))
