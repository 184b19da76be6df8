"""The `repair` sandbox job: the rule-based repair of one task, inside the sandbox (the repairers re-run the oracle
and other episodes on the untrusted spec).

Importing this module registers the job; a pool that runs it starts its workers with this module imported (see
`coworkenv.sandbox.jobs`). The repair loop itself is imported when the job runs, or by the warm-up.
"""

from __future__ import annotations

import json
from typing import Any

from coworkenv.sandbox.jobs import job
from coworkenv.validate.jobs import warm_validate

JOB_NAME = "repair"


def warm_repair() -> None:
    warm_validate()
    import coworkenv.repair.loop  # noqa: F401


@job(JOB_NAME, warmup=warm_repair)
def repair(payload: str) -> dict[str, Any]:
    """`{"spec", "validation", "rounds", "advisory"}` → the `RepairOutcome` as JSON."""
    from coworkenv.repair.loop import repair_task
    from coworkenv.spec.verdict import TaskValidation

    request = json.loads(payload)
    validation = TaskValidation.model_validate(request["validation"]) if request.get("validation") else None
    outcome = repair_task(
        request["spec"],
        validation,
        rounds=int(request.get("rounds", 3)),
        include_advisory=bool(request.get("advisory")),
    )
    return outcome.model_dump(mode="json")
