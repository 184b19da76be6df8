"""The capability profile from eval rows (docs/design/evaluation.md, "Evaluation metrics and reports"): per capability ×
difficulty, trials attempted and passed. One computation feeds both the `capability_profile` table and the planner's
`CapabilityProfile`, so the two always agree."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from coworkenv.data.build import capability_profile_table
from coworkenv.errors import CoworkEnvError
from coworkenv.eval.per_task import agent_label, as_rows, capability_order, per_task
from coworkenv.spec.capabilities import CAPABILITIES, CapabilityProfile, ProfileRow


def profile_rows(rows: Any, *, model: str | None = None) -> list[dict[str, Any]]:
    """`capability_profile` rows: a trial counts once in each capability of its task; failed trials are attempts that
    did not pass. `model` defaults to the rows' agent label. Sorted by the taxonomy's order, then difficulty."""
    rows = as_rows(rows)
    tasks = per_task(rows)
    model = agent_label(rows) if model is None else model
    cells: dict[tuple[str, int], list[int]] = {}
    for task in tasks:
        for capability in dict.fromkeys(task.capabilities):
            if capability not in CAPABILITIES:
                raise CoworkEnvError(f"eval rows: task {task.task_id!r}: {CAPABILITIES.unknown_message(capability)}")
            if not 1 <= task.difficulty <= 5:
                raise CoworkEnvError(f"eval rows: task {task.task_id!r}: difficulty {task.difficulty} is not 1–5")
            cell = cells.setdefault((capability, task.difficulty), [0, 0])
            cell[0] += task.n
            cell[1] += task.passes
    order = {c: i for i, c in enumerate(capability_order(c for c, _ in cells))}
    return [
        {
            "model": model,
            "capability": c,
            "difficulty": d,
            "attempts": attempts,
            "passes": passes,
            "pass_rate": passes / attempts,
        }
        for (c, d), (attempts, passes) in sorted(cells.items(), key=lambda item: (order[item[0][0]], item[0][1]))
    ]


def profile_table(rows: Any, *, model: str | None = None) -> pa.Table:
    """The `capability_profile` table of the rows."""
    return capability_profile_table(profile_rows(rows, model=model))


def profile_from_rows(profile: list[dict[str, Any]]) -> CapabilityProfile:
    """The planner's profile of `capability_profile` rows (one model's; also a table's `to_pylist()`)."""
    models = {row["model"] for row in profile}
    if len(models) > 1:
        raise CoworkEnvError(
            f"capability profile: rows of several models ({', '.join(sorted(models))}); give one model's"
        )
    cells = [
        ProfileRow(
            capability=r["capability"], difficulty=r["difficulty"], attempts=r["attempts"], pass_rate=r["pass_rate"]
        )
        for r in profile
    ]
    return CapabilityProfile(model=models.pop() if models else "", rows=cells)


def capability_profile(rows: Any, *, model: str | None = None) -> CapabilityProfile:
    """The planner's profile (the JSON `--profile` reads) of eval rows."""
    return profile_from_rows(profile_rows(rows, model=model))
