"""Stage validate: the battery on one shard's raw task texts, in the sandbox; one TaskValidation per task, in order."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from coworkenv.pipeline.rundir import RunDir, read_jsonl, write_jsonl
from coworkenv.validate.batch import validate_tasks


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
    return {"shard": shard, "tasks": len(lines), "valid": valid, "invalid": len(lines) - valid, "rejections_by_code": dict(failed.most_common())}
