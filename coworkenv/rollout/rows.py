"""Release rows from trial records: `trajectories` rows (`trajectory_row` and the engine's evidence columns) and
`eval_results` rows (`eval_row` and the engine's details)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from coworkenv.data.build import eval_row, trajectory_row
from coworkenv.errors import CoworkEnvError
from coworkenv.rollout.trial_record import TrialRecord
from coworkenv.spec.task import TaskSpec


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def record_trajectory_row(record: TrialRecord, spec: TaskSpec) -> dict[str, Any]:
    """A `trajectories` row: `trajectory_row`'s columns and the three evidence channels, status and timing."""
    row = trajectory_row(
        spec, {"messages": record.messages}, record.grade, agent=record.agent, model=record.model, trial=record.trial
    )
    row.update(
        status=record.status,
        error=record.error,
        trace_json=_dumps(record.trace),
        audit_json=_dumps(record.audit),
        diff_json=_dumps(record.diff),
        n_format_errors=record.n_format_errors,
        wall_s=record.wall_s,
    )
    return row


def record_eval_row(record: TrialRecord, spec: TaskSpec, *, eval_id: str, suite: str = "") -> dict[str, Any]:
    """An `eval_results` row: `eval_row`'s columns (`model` is the agent's model, else its label) and the engine's details."""
    row = eval_row(spec, record.grade, eval_id=eval_id, model=record.model or record.agent, trial=record.trial)
    row.update(
        agent=record.agent,
        suite=suite or None,
        status=record.status,
        error=record.error,
        n_format_errors=record.n_format_errors,
        n_turns=record.n_turns,
        prompt_tokens=record.prompt_tokens,
        completion_tokens=record.completion_tokens,
        wall_s=record.wall_s,
    )
    return row


def _spec_for(record: TrialRecord, specs: Mapping[str, TaskSpec]) -> TaskSpec:
    spec = specs.get(record.task_id)
    if spec is None:
        raise CoworkEnvError(f"trial {record.task_id}/{record.trial}: no spec for task {record.task_id!r}")
    return spec


def trajectory_rows(
    records: Iterable[TrialRecord], specs: Iterable[TaskSpec] | Mapping[str, TaskSpec]
) -> list[dict[str, Any]]:
    by_id = specs if isinstance(specs, Mapping) else {s.id: s for s in specs}
    return [record_trajectory_row(r, _spec_for(r, by_id)) for r in records]


def eval_rows(
    records: Iterable[TrialRecord], specs: Iterable[TaskSpec] | Mapping[str, TaskSpec], *, eval_id: str, suite: str = ""
) -> list[dict[str, Any]]:
    by_id = specs if isinstance(specs, Mapping) else {s.id: s for s in specs}
    return [record_eval_row(r, _spec_for(r, by_id), eval_id=eval_id, suite=suite) for r in records]
