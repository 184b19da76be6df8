"""Stage validate: the battery on one shard's raw task texts, in the sandbox; one TaskValidation per task, in order.

The shard streams through in batches of `batch_size` tasks (docs/design/pipeline.md, "Bounded memory"): read, validated
on one pool of sandboxed workers, written; the summary keeps counts and an example per failure code."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Iterable
from contextlib import closing
from typing import Any

from coworkenv.pipeline.rundir import BATCH, RunDir, batched, count_jsonl, iter_jsonl, jsonl_writer
from coworkenv.pipeline.summary import Reasons, block
from coworkenv.progress import given_or_logged
from coworkenv.spec.verdict import TaskValidation
from coworkenv.validate.batch import iter_validations

log = logging.getLogger(__name__)


def validate_shard(
    run: RunDir, shard: int, progress: Callable[..., Any] | None = None, batch_size: int = BATCH
) -> dict[str, Any]:
    """The battery on the shard's tasks. `progress(n)` advances by the tasks just validated (none: progress lines
    logged through `coworkenv.progress`, which Airflow's task log shows)."""
    config = run.config()
    source = run.shard_file("generated", shard, "tasks")
    summary = VerdictSummary()
    total = count_jsonl(source) if progress is None else None
    with given_or_logged(progress, f"validate shard {shard}", total, unit="task") as step:
        batches = iter_validations(
            batched(iter_jsonl(source), batch_size),
            workers=config.workers,
            runtime=config.runtime,
            progress=step,
            name=lambda i: f"{source.name}:{i + 1}",  # labels the tasks that have no id of their own
            budget_s=config.task_budget_s,
        )
        # closing: on an error the pool's workers stop now, not when the traceback is collected
        with closing(batches), jsonl_writer(run.shard_file("validated", shard, "validations")) as write:
            for validations in batches:
                write(v.model_dump_json() for v in validations)
                summary.add(validations)
    log.info("%s", summary.text(f"validate shard {shard}"))
    return {
        "shard": shard,
        "tasks": summary.tasks,
        "valid": summary.valid,
        "invalid": summary.tasks - summary.valid,
        "rejections_by_code": dict(summary.failed.most_common()),
    }


def rejection_reasons(validations: Iterable[TaskValidation]) -> list[tuple[str, str, str]]:
    """(failure code, task id, the check's message) for each mandatory check each rejected task failed."""
    return [
        (r.code, v.task_id, r.message)
        for v in validations
        if not v.valid
        for r in v.failures
        if r.severity == "mandatory"
    ]


class VerdictSummary:
    """What the log says of many verdicts, added a batch at a time: counts, and an example per failure code."""

    def __init__(self) -> None:
        self.tasks = self.valid = 0
        self.failed: Counter[str] = Counter()
        """Rejected-or-not, each failure code once per task that failed it."""
        self.reasons = Reasons()

    def add(self, validations: Iterable[TaskValidation]) -> None:
        for v in validations:
            self.tasks += 1
            self.valid += v.valid
            self.failed.update(code for code in dict.fromkeys(v.failed_codes))
            for reason in rejection_reasons([v]):
                self.reasons.add(*reason)

    def text(self, what: str) -> str:
        """`<what>: 40 tasks, 35 valid, 5 rejected`, then the most frequent failure codes, each with an example."""
        head = f"{what}: {self.tasks} tasks, {self.valid} valid, {self.tasks - self.valid} rejected"
        return block(head + ("; top rejection reasons:" if self.reasons else ""), self.reasons.lines())


def verdict_summary(what: str, validations: Iterable[TaskValidation]) -> str:
    """`<what>: 40 tasks, 35 valid, 5 rejected`, then the most frequent failure codes, each with an example."""
    summary = VerdictSummary()
    summary.add(validations)
    return summary.text(what)
