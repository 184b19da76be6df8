"""The `validate` sandbox job: the battery on one raw TaskSpec JSON text, parsed inside the sandbox.

Importing this module registers the job; a pool that runs it starts its workers with this module imported (see
`coworkenv.sandbox.jobs`). Kept light: the battery is imported when the job runs, or by the warm-up.
"""

from __future__ import annotations

from typing import Any

from coworkenv.sandbox.jobs import job

JOB_NAME = "validate"
JUDGED_JOB_NAME = "validate_judged"
BATTERY_BUDGET_S = 5.0
"""Wall-clock seconds the battery may spend on one task in the sandbox unless the run says otherwise
(`task_budget_s`): a real task needs well under a second, so only a hostile or broken one gets to it."""


def warm_validate() -> None:
    """Import the battery (and with it every module it runs), so a worker's first task costs what its others do."""
    import coworkenv.validate.battery  # noqa: F401


@job(JOB_NAME, warmup=warm_validate, budget_s=BATTERY_BUDGET_S)
def validate(payload: str) -> Any:
    """The validation battery on one raw TaskSpec JSON text (parsed here, inside the sandbox): TaskValidation JSON."""
    from coworkenv.validate.battery import validate_spec_json

    return validate_spec_json(payload)


@job(JUDGED_JOB_NAME, warmup=warm_validate, budget_s=BATTERY_BUDGET_S)
def validate_judged(payload: str) -> Any:
    """The battery with rubric verdicts from the parent (`judge.sandbox_jobs`): payload `{"task": <raw TaskSpec JSON
    text>, "verdicts": [TableRow, ...]}`; output `{"output": <TaskValidation JSON>, "missed": [[criteria, text], ...]}`,
    the pairs the battery asked about that the table lacked (not graded here; the parent may ask its judge and run it
    again)."""
    import json

    from coworkenv.judge.sandbox_jobs import judged_job
    from coworkenv.validate.battery import validate_spec_json

    request = json.loads(payload)  # written by the parent: the task's raw text is a string inside it
    return judged_job(request, lambda: validate_spec_json(request["task"]))
