"""The `validate` sandbox job: the battery on one raw TaskSpec JSON text, parsed inside the sandbox.

Importing this module registers the job; a pool that runs it starts its workers with this module imported (see
`coworkenv.sandbox.jobs`). Kept light: the battery is imported when the job runs, or by the warm-up.
"""

from __future__ import annotations

import importlib
from typing import Any

from coworkenv.sandbox.jobs import job

JOB_NAME = "validate"

BATTERY_IMPORTS = (
    "coworkenv.validate.battery", "coworkenv.agents", "coworkenv.episode.runner", "coworkenv.episode.trajectory", "coworkenv.grading.score",
    "coworkenv.grading.consistency", "coworkenv.grading.checks", "coworkenv.grading.matching", "coworkenv.workspace.tools",
    "coworkenv.workspace.paths", "coworkenv.spec.workspace",
)  # fmt: skip


def warm_validate() -> None:
    """Import what the battery imports lazily, so a worker's first task costs what its others do."""
    for module in BATTERY_IMPORTS:
        try:
            importlib.import_module(module)
        except ImportError:
            pass


@job(JOB_NAME, warmup=warm_validate)
def validate(payload: str) -> Any:
    """The validation battery on one raw TaskSpec JSON text (parsed here, inside the sandbox): TaskValidation JSON."""
    from coworkenv.validate.battery import validate_spec_json

    return validate_spec_json(payload)
