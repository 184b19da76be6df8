"""Stage gate: the Great Expectations gates at the validation and rollout boundaries over the staged tables. A failure
raises `GateFailed` (Data Docs under the run's `quality/`) and nothing gets published."""

from __future__ import annotations

from typing import Any

from coworkenv.pipeline.build import staged_tables
from coworkenv.pipeline.rundir import RunDir

STAGES = ("validated", "rollouts")


def gate_tables(run: RunDir) -> dict[str, Any]:
    from coworkenv.quality.gates import run_gate  # Great Expectations takes seconds to import

    tables = staged_tables(run)
    return {stage: run_gate(stage, tables, report_dir=run.file("quality")).statistics for stage in STAGES}
