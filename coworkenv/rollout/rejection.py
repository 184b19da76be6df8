"""Rejection sampling for SFT (docs/design/agents-and-rollouts.md, "Rollouts"): an agent's own successful trials become `sft` rows.

Kept: trials with status `ok` and score ≥ `threshold` (default 1.0: every check passed, no unrecovered tool error,
no violation; `PASS_THRESHOLD`, 0.75, would also keep trials that missed a quarter of the check weight, and training on
them teaches the misses). Deduplicated per task: a trial with the same evidence hash (the same calls, answer and
final state) or the same messages as one kept before it is dropped, so k identical successes count once.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

import pyarrow as pa

from coworkenv.data.build import sft_table
from coworkenv.errors import CoworkEnvError
from coworkenv.rollout.rows import trajectory_rows
from coworkenv.rollout.trial_record import TrialRecord, messages_hash
from coworkenv.spec.task import TaskSpec

DEFAULT_THRESHOLD = 1.0


def select_for_sft(records: Iterable[TrialRecord], *, threshold: float = DEFAULT_THRESHOLD) -> list[TrialRecord]:
    """The trials to train on, in the order given: ok, score ≥ threshold, first of their duplicates."""
    if not 0.0 < threshold <= 1.0:
        raise CoworkEnvError(f"the SFT threshold must be in (0, 1], got {threshold}")
    kept: list[TrialRecord] = []
    seen: set[tuple[str, str]] = set()
    for record in records:
        if not record.ok or record.grade.score < threshold:
            continue
        keys = {
            (record.task_id, "evidence:" + record.grade.evidence_hash),
            (record.task_id, "messages:" + messages_hash(record.messages)),
        }
        if keys & seen:
            continue
        seen |= keys
        kept.append(record)
    return kept


def sft_from_trials(
    records: Iterable[TrialRecord],
    specs: Iterable[TaskSpec] | Mapping[str, TaskSpec],
    *,
    threshold: float = DEFAULT_THRESHOLD,
) -> pa.Table:
    """The `sft` table of the selected trials (`data.build.sft_table`: messages as structs, tools as JSON, TRL-ready)."""
    by_id = dict(specs) if isinstance(specs, Mapping) else {s.id: s for s in specs}
    rows = trajectory_rows(select_for_sft(records, threshold=threshold), by_id)
    return sft_table(rows, by_id, only_passed=False)


def write_sft(
    records: Iterable[TrialRecord],
    specs: Iterable[TaskSpec] | Mapping[str, TaskSpec],
    dest: str | os.PathLike[str],
    *,
    threshold: float = DEFAULT_THRESHOLD,
) -> int:
    """Write the selected trials' `sft` rows as one Parquet file (whole or not at all); the number of rows."""
    import pyarrow.parquet as pq

    from coworkenv.fileio import staged

    table = sft_from_trials(records, specs, threshold=threshold)
    with staged(dest) as tmp:
        pq.write_table(table, tmp)
    return table.num_rows
