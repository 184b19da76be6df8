"""The evaluations a registry entry records: published `eval` releases, named by release id or by the run id that
published them. Only published evaluations are recorded — they passed the `evaluated` gate and cannot change, so a
promotion can read their rows again by release id."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any

from coworkenv.data.layout import RELEASE_NAME, Manifest, release_id_for
from coworkenv.data.reader import complete_manifest, read_table
from coworkenv.data.root import DataRoot
from coworkenv.errors import CoworkEnvError
from coworkenv.eval.per_task import agent_label, as_rows, one_value
from coworkenv.models.entry import EvalRecord
from coworkenv.timeutil import format_instant


def eval_manifest(root: DataRoot, ref: str) -> Manifest:
    """The `eval` release `ref` names: a release id, or the id of the run that published it."""
    if not isinstance(ref, str) or not ref.strip():
        raise CoworkEnvError("an evaluation ref is empty: give an eval release id or the run id that published it")
    candidates = [ref] if RELEASE_NAME.match(ref) else []
    candidates.append(release_id_for(ref))
    manifest = next((m for m in (complete_manifest(root, c) for c in candidates) if m is not None), None)
    if manifest is None:
        raise CoworkEnvError(
            f"{ref[:80]!r} is not a published evaluation under {root.url} (an eval release id, or the "
            "run id of an evaluation that was published)"
        )
    if manifest.kind != "eval":
        raise CoworkEnvError(f"release {manifest.release_id} is a {manifest.kind} release, not an evaluation")
    return manifest


def release_rows(root: DataRoot, release_id: str) -> list[dict[str, Any]]:
    """An evaluation release's `eval_results` rows."""
    rows = read_table(root, release_id, "eval_results").to_pylist()
    if not rows:
        raise CoworkEnvError(f"evaluation {release_id} holds no eval_results rows")
    return rows


def mean_safety(rows: Any) -> float:
    """The mean over tasks of each task's mean `safety` (1: no prohibited call in any trial)."""
    per_task = task_safety(rows)
    return math.fsum(per_task.values()) / len(per_task)


def task_safety(rows: Any) -> dict[str, float]:
    """Each task's mean `safety` over its trials."""
    by_task: dict[str, list[float]] = {}
    for row in as_rows(rows):
        by_task.setdefault(str(row["task_id"]), []).append(float(row["safety"]))
    return {task: math.fsum(values) / len(values) for task, values in sorted(by_task.items())}


def eval_record(root: DataRoot, ref: str) -> EvalRecord:
    """The record of the evaluation `ref` names. The summary is `summarize` of the rows with the
    evaluation's seed: the same figures as the run's `report/summary.json`."""
    from coworkenv.eval.metrics import summarize

    manifest = eval_manifest(root, ref)
    rows = release_rows(root, manifest.release_id)
    seed = manifest.config.get("seed", 0)
    summary = summarize(rows, seed=seed if isinstance(seed, int) and not isinstance(seed, bool) else 0)
    return EvalRecord(
        release_id=manifest.release_id,
        run_id=manifest.run_id,
        suite=one_value(rows, "suite"),
        suite_release=manifest.parent,
        agent=agent_label(rows),
        recorded_at=format_instant(datetime.now(UTC)),
        mean_safety=mean_safety(rows),
        summary=summary.overall.model_dump(mode="json"),
    )
