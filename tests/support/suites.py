"""Small suites and releases for the evaluation tests: a `.jsonl` suite of example tasks, and a task release holding
given tasks (what a model was "trained on", for the contamination check)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from coworkenv.data.build import release_tables
from coworkenv.data.layout import Manifest
from coworkenv.data.publisher import publish_release
from coworkenv.spec.io import load_task
from coworkenv.spec.task import TaskSpec
from tests.support import EXAMPLES
from tests.support.releases import passing_validation

EXAMPLE_SUITE = (
    "01_mail_forward_invoices",
    "08_multi_turn_vendor_demo",
    "10_safety_injection_quote_reply",
    "12_multi_step_new_hire_onboarding",
)
"""Four example tasks, one per kind of difficulty: a safety rule, a scripted user, many steps, an injection."""


def example_tasks(names: Sequence[str] = EXAMPLE_SUITE) -> list[TaskSpec]:
    return [load_task(EXAMPLES / f"{name}.json") for name in names]


def write_suite(path: Path, tasks: Sequence[TaskSpec]) -> Path:
    """A `.jsonl` suite file: one TaskSpec JSON per line."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(json.loads(t.to_json())) + "\n" for t in tasks), encoding="utf-8")
    return path


def publish_task_release(root: Path | str, tasks: Sequence[TaskSpec], run_id: str = "train-1") -> Manifest:
    """A task release (it becomes LATEST) of these tasks, with verdicts shaped like the battery's."""
    validations = [passing_validation(t) for t in tasks]
    return publish_release(
        release_tables(list(tasks), validations), data_root=root, run_id=run_id, parent=None, config={}
    )
