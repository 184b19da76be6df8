"""Stage rollout: the oracle played on every valid task of the run, in the sandbox; graded `trajectories` rows (the
SFT data of the release) under `rollouts/`."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

from coworkenv.errors import CoworkEnvError
from coworkenv.pipeline.config import SynthesisConfig
from coworkenv.pipeline.rundir import BATCH, RunDir, batched, jsonl_writer, valid_tasks, verdicts
from coworkenv.progress import given_or_logged
from coworkenv.redact import safe_message
from coworkenv.sandbox.choices import IN_PROCESS
from coworkenv.spec.task import TaskSpec

log = logging.getLogger(__name__)

AGENT = "oracle"


def rollout_run(run: RunDir, progress: Callable[[int], None] | None = None, batch_size: int = BATCH) -> dict[str, Any]:
    """The oracle on every valid task, `batch_size` tasks at a time (docs/design/pipeline.md, "Bounded memory"); the
    rows are written as each batch finishes, and the file appears whole at the end. `progress(n)` advances by the tasks
    just played (none: progress lines logged through `coworkenv.progress`, which Airflow's task log shows)."""
    config = run.config()
    n = passed = 0
    failed: list[str] = []
    specs = (spec for spec, _ in valid_tasks(verdicts(run)))
    with (
        given_or_logged(progress, "rollout", unit="task") as step,
        jsonl_writer(run.file("rollouts", "trajectories.jsonl")) as write,
    ):
        for batch in batched(specs, batch_size):
            rows = _rollouts(batch, config, step)
            write(json.dumps(row, ensure_ascii=False) for row in rows)
            n += len(rows)
            passed += sum(1 for r in rows if r["passed"])
            failed += [r["task_id"] for r in rows if not r["passed"]][: 3 - len(failed)]
    log.info(
        "rollout: the %s played %d valid tasks: %d passed, %d did not%s",
        AGENT,
        n,
        passed,
        n - passed,
        f" (e.g. {', '.join(failed)})" if failed else "",
    )
    return {"trajectories": n, "passed": passed}


def _rollouts(
    specs: list[TaskSpec], config: SynthesisConfig, progress: Callable[[int], None] | None
) -> list[dict[str, Any]]:
    if config.runtime == IN_PROCESS:
        from coworkenv.rollout import rollout_rows

        return rollout_rows(specs, AGENT, progress=progress)
    from coworkenv.rollout.oracle_rollouts import sandboxed_rollouts

    step = (lambda *_: progress(1)) if progress is not None else None
    results = sandboxed_rollouts(
        specs, AGENT, workers=config.workers, runtime=config.runtime, progress=step, budget_s=config.task_budget_s
    )
    failed = [(spec.id, r) for spec, r in zip(specs, results, strict=True) if not r.ok]
    if failed:  # these tasks passed the battery: a rollout that fails in the sandbox is a fault, not a verdict
        task_id, r = failed[0]
        why = safe_message(r.error or "", 300)
        raise CoworkEnvError(f"{len(failed)} rollout(s) failed in the sandbox, e.g. {task_id}: {r.error_code}: {why}")
    return [r.output for r in results]
