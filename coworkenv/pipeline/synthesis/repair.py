"""Stage repair: every invalid task of the run, rule-based repairers then the LLM, each patch re-validated; the rule
pass runs in the sandbox (it plays the untrusted spec), the LLM pass validates through it."""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Callable
from typing import Any

from coworkenv.errors import CoworkEnvError
from coworkenv.fileio import parse_json, staged
from coworkenv.llm import LLMConfig
from coworkenv.pipeline.config import SynthesisConfig
from coworkenv.pipeline.rundir import BATCH, RunDir, batched, jsonl_writer, validated, write_json
from coworkenv.pipeline.summary import block, top_reasons
from coworkenv.pipeline.synthesis.validate import rejection_reasons
from coworkenv.progress import given_or_logged
from coworkenv.repair.loop import RepairOutcome, metrics, repair_many
from coworkenv.repair.sandboxed import repair_in_sandbox
from coworkenv.sandbox.choices import IN_PROCESS
from coworkenv.spec.verdict import TaskValidation

log = logging.getLogger(__name__)


def _spec_data(line: str) -> dict[str, Any] | None:
    """The task's JSON object, or None when there is nothing to repair (not JSON, or not an object)."""
    try:
        data = parse_json(line, "task")
    except CoworkEnvError:
        return None
    return data if isinstance(data, dict) else None


def repair_run(
    run: RunDir, llm: LLMConfig | None = None, progress: Callable[[int], None] | None = None, batch_size: int = BATCH
) -> dict[str, Any]:
    """Repair the rejected tasks `batch_size` at a time (docs/design/pipeline.md, "Bounded memory"), writing each batch's
    results as it finishes; what stays in memory across batches is each outcome without its specs (for the metrics).
    `progress(n)` advances by the tasks just repaired or given up (none: progress lines logged through
    `coworkenv.progress`, which Airflow's task log shows)."""
    from coworkenv.repair.llm import LLMRepairer  # the OpenAI client is imported only where an endpoint is used

    config = run.config()
    repairer = LLMRepairer(llm.model_copy(update={"temperature": 0.0})) if llm is not None else None
    rejected = repairable = kept = 0
    outcomes: list[RepairOutcome] = []
    # the four files agree with each other, or stay as they were
    with given_or_logged(progress, "repair", unit="task") as step, staged(run.file("repaired"), folder=True) as folder:
        with (
            jsonl_writer(folder / "tasks.jsonl") as tasks,
            jsonl_writer(folder / "validations.jsonl") as validations,
            jsonl_writer(folder / "attempts.jsonl") as attempts,
        ):
            for batch in batched(((line, v) for line, v in validated(run) if not v.valid), batch_size):
                items = [(data, v) for line, v in batch if (data := _spec_data(line)) is not None]
                rejected, repairable = rejected + len(batch), repairable + len(items)
                done = _repair(items, config, repairer, step) if config.repair_rounds and items else []
                good = [o for o in done if o.repaired and o.spec is not None and o.validation is not None]
                kept += tasks(json.dumps(o.spec, ensure_ascii=False) for o in good)
                validations(o.validation.model_dump_json() for o in good if o.validation is not None)
                attempts(
                    json.dumps(
                        {"task_id": f"{o.task_id}-r{a.round}", "parent_id": o.task_id, **a.model_dump(mode="json")},
                        ensure_ascii=False,
                    )
                    for o in done
                    for a in o.attempts
                )
                outcomes += [_light(o) for o in done]
        summary = metrics(outcomes).model_dump(mode="json") if outcomes else {}
        write_json(folder / "metrics.json", summary)
    log.info("%s", _summary(rejected, repairable, outcomes, config.repair_rounds))
    return {"invalid": repairable, "repaired": kept, "metrics": summary}


def _repair(
    items: list[tuple[dict[str, Any], TaskValidation]],
    config: SynthesisConfig,
    repairer: Any,
    progress: Callable[[int], None] | None,
) -> list[RepairOutcome]:
    if config.runtime == IN_PROCESS:
        step = (lambda _outcome: progress(1)) if progress is not None else None
        return repair_many(items, rounds=config.repair_rounds, llm=repairer, progress=step)
    return repair_in_sandbox(
        items,
        rounds=config.repair_rounds,
        workers=config.workers,
        runtime=config.runtime,
        llm=repairer,
        progress=progress,
        budget_s=config.task_budget_s,
    )


def _light(outcome: RepairOutcome) -> RepairOutcome:
    """What the metrics and the summary read of an outcome: no specs, no patches."""
    attempts = [a.model_copy(update={"patch": []}) for a in outcome.attempts]
    return outcome.model_copy(update={"spec": None, "last_spec": None, "attempts": attempts})


def _tasks(n: int) -> str:
    return f"{n} task" if n == 1 else f"{n} tasks"


def _summary(rejected: int, repairable: int, outcomes: list[RepairOutcome], rounds: int) -> str:
    """Rescued and still rejected, overall and by strategy; what still fails the tasks that stay rejected."""
    if not rejected:
        return "repair: nothing to repair (no task was rejected)"
    unparsed = f" ({rejected - repairable} not a JSON object, not repairable)" if rejected > repairable else ""
    if not rounds or not outcomes:
        return f"repair: {rejected} rejected tasks{unparsed}, none repaired" + (
            " (repair_rounds is 0)" if not rounds else ""
        )
    rescued = [o for o in outcomes if o.valid]
    head = (
        f"repair: {rejected} rejected tasks{unparsed}: {len(rescued)} rescued ({len(rescued) / len(outcomes):.0%} of those tried), "
        f"{rejected - len(rescued)} still rejected; by strategy:"
    )
    tried, saved, failed = Counter[str](), Counter[str](), Counter[str]()
    for o in outcomes:
        for strategy in dict.fromkeys(a.strategy for a in o.attempts):
            tried[strategy] += 1
            failed[strategy] += not o.valid
        saved.update({a.strategy for a in o.attempts if a.kept and o.valid})
    untried = sum(1 for o in outcomes if not o.attempts)
    details = [
        f"  {s}: tried on {_tasks(n)}, rescued {saved[s]}, still rejected {failed[s]}" for s, n in sorted(tried.items())
    ]
    if untried:
        details.append(f"  no strategy applied to {_tasks(untried)}")
    still = rejection_reasons([o.validation for o in outcomes if not o.valid and o.validation is not None])
    if still:
        details += ["  still failing:", *top_reasons(still)]
    return block(head, details)
