"""Stage validate: the battery on one shard's raw task texts, in the sandbox; one TaskValidation per task, in order."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable
from typing import Any

from coworkenv.pipeline.rundir import RunDir, read_jsonl, write_jsonl
from coworkenv.pipeline.summary import block, top_reasons
from coworkenv.validate.batch import validate_tasks
from coworkenv.validate.verdict import TaskValidation

log = logging.getLogger(__name__)


def validate_shard(run: RunDir, shard: int, progress: Callable[..., Any] | None = None) -> dict[str, Any]:
    config = run.config()
    source = run.shard_file("generated", shard, "tasks")
    lines = read_jsonl(source)
    names = [f"{source.name}:{i}" for i in range(1, len(lines) + 1)]  # labels the tasks that have no id of their own
    validations = validate_tasks(lines, workers=config.workers, runtime=config.runtime, names=names, progress=progress,
                                 budget_s=config.task_budget_s)  # fmt: skip
    write_jsonl(run.shard_file("validated", shard, "validations"), [v.model_dump_json() for v in validations])
    failed = Counter(code for v in validations for code in dict.fromkeys(v.failed_codes))
    valid = sum(v.valid for v in validations)
    log.info("%s", verdict_summary(f"validate shard {shard}", validations))
    return {"shard": shard, "tasks": len(lines), "valid": valid, "invalid": len(lines) - valid, "rejections_by_code": dict(failed.most_common())}


def rejection_reasons(validations: list[TaskValidation]) -> list[tuple[str, str, str]]:
    """(failure code, task id, the check's message) for each mandatory check each rejected task failed."""
    return [(r.code, v.task_id, r.message) for v in validations if not v.valid for r in v.failures if r.severity == "mandatory"]


def verdict_summary(what: str, validations: list[TaskValidation]) -> str:
    """`<what>: 40 tasks, 35 valid, 5 rejected`, then the most frequent failure codes, each with an example."""
    valid = sum(v.valid for v in validations)
    head = f"{what}: {len(validations)} tasks, {valid} valid, {len(validations) - valid} rejected"
    reasons = rejection_reasons(validations)
    return block(head + ("; top rejection reasons:" if reasons else ""), top_reasons(reasons))
