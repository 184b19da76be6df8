"""Repair with untrusted specs kept in the sandbox: the rule pass runs as `repair` jobs in the worker pool; the
LLM pass (which needs the network the sandbox does not have) runs here, but validates through the pool."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from coworkenv.redact import safe_message
from coworkenv.repair.jobs import JOB_NAME
from coworkenv.repair.loop import RepairOutcome, failed_codes, repair_task
from coworkenv.spec.verdict import TaskValidation


def sandboxed_validate(runtime: str, budget_s: float | None = None) -> Callable[[dict[str, Any]], TaskValidation]:
    from coworkenv.validate.batch import validate_tasks

    def validate(spec: dict[str, Any]) -> TaskValidation:
        return validate_tasks([json.dumps(spec, ensure_ascii=False)], workers=1, runtime=runtime, budget_s=budget_s)[0]

    return validate


def repair_in_sandbox(
    items: Sequence[tuple[dict[str, Any], TaskValidation | None]],
    *,
    rounds: int,
    advisory: bool = False,
    workers: int,
    runtime: str,
    llm: Any = None,
    progress: Callable[[int], None] | None = None,
    budget_s: float | None = None,
) -> list[RepairOutcome]:
    """`budget_s`: wall-clock seconds per task, for the rule pass and for each validation (default: the jobs' own)."""
    from coworkenv.sandbox.pool import run_jobs

    payloads = [
        json.dumps(
            {"spec": s, "validation": v.model_dump(mode="json") if v else None, "rounds": rounds, "advisory": advisory},
            ensure_ascii=False,
        )
        for s, v in items
    ]
    results = run_jobs(JOB_NAME, payloads, workers=workers, runtime=runtime, progress=progress, budget_s=budget_s)
    outcomes = []
    for (spec, validation), result in zip(items, results, strict=True):
        if result.ok:
            outcome = RepairOutcome.model_validate(result.output)
        else:
            task_id = validation.task_id if validation else str(spec.get("id", ""))
            why = f"{result.error_code}: {safe_message(result.error or '')}"  # no traceback, no host path, no secret
            outcome = RepairOutcome(
                task_id=task_id,
                initially_failed=failed_codes(validation) if validation else [result.error_code or ""],
                valid=False,
                rejection=why,
                last_spec=spec,
                validation=validation,
            )
        if not outcome.valid and llm is not None and result.ok:
            outcome = repair_task(
                outcome.last_spec or spec,
                outcome.validation or validation,
                rounds=rounds,
                llm=llm,
                validate=sandboxed_validate(runtime, budget_s),
                include_advisory=advisory,
                rules=False,
            )
        outcomes.append(outcome)
    return outcomes
