"""Stage rollout: the oracle played on every valid task of the run, in the sandbox; graded `trajectories` rows (the
SFT data of the release) under `rollouts/`."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

from coworkenv.errors import CoworkEnvError
from coworkenv.pipeline.rundir import RunDir, valid_tasks, verdicts, write_jsonl
from coworkenv.redact import safe_message
from coworkenv.sandbox.choices import IN_PROCESS

log = logging.getLogger(__name__)

AGENT = "oracle"


def rollout_run(run: RunDir, progress: Callable[[int], None] | None = None) -> dict[str, Any]:
    config = run.config()
    specs = [spec for spec, _ in valid_tasks(verdicts(run))]
    if config.runtime == IN_PROCESS:
        from coworkenv.rollout import rollout_rows

        rows = rollout_rows(specs, AGENT, progress=progress)
    else:
        from coworkenv.rollout.play import sandboxed_rollouts

        step = (lambda *_: progress(1)) if progress is not None else None
        results = sandboxed_rollouts(specs, AGENT, workers=config.workers, runtime=config.runtime, progress=step, budget_s=config.task_budget_s)
        failed = [(spec.id, r) for spec, r in zip(specs, results, strict=True) if not r.ok]
        if failed:  # these tasks passed the battery: a rollout that fails in the sandbox is a fault, not a verdict
            task_id, r = failed[0]
            why = safe_message(r.error or "", 300)
            raise CoworkEnvError(f"{len(failed)} rollout(s) failed in the sandbox, e.g. {task_id}: {r.error_code}: {why}")
        rows = [r.output for r in results]
    write_jsonl(run.file("rollouts", "trajectories.jsonl"), [json.dumps(row, ensure_ascii=False) for row in rows])
    passed = sum(1 for r in rows if r["passed"])
    failed = [r["task_id"] for r in rows if not r["passed"]]
    log.info("rollout: the %s played %d valid tasks: %d passed, %d did not%s", AGENT, len(rows), passed, len(failed),
             f" (e.g. {', '.join(failed[:3])})" if failed else "")  # fmt: skip
    return {"trajectories": len(rows), "passed": passed}
