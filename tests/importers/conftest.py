"""The sample Claw-Eval tasks (examples/claw-eval/, written for this project in Claw-Eval's format), imported once."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from coworkenv.importers.claw_eval import Imported, import_claw_eval
from coworkenv.judge.endpoint import using_judge
from tests.support import ROOT

CLAW_EVAL = ROOT / "examples" / "claw-eval"


@pytest.fixture(scope="module")
def imported() -> Imported:
    with using_judge(None):  # whatever the environment says: no judge
        return import_claw_eval(CLAW_EVAL)


def reports(result: Imported) -> dict:
    return {t.task_id: t for t in result.report.tasks}


def specs(result: Imported) -> dict:
    return {s.meta.claw_eval_id: s for s in result.specs}


@pytest.fixture
def task_copy(tmp_path) -> callable:
    """A copy of one fixture task in a fresh folder, to break on purpose."""

    def make(name: str) -> Path:
        dest = tmp_path / "tasks" / name
        shutil.copytree(CLAW_EVAL / "tasks" / name, dest)
        return dest

    return make
