"""Clean release tables for every gate stage, built the way a run builds them: 60 procedural tasks (seed 1), their
real battery verdicts, oracle and null rollouts, and the release builder; `eval_results` from oracle, null and
oracle-plus-violation runs through the builder's eval rows. Great Expectations itself is imported once per session.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest

from coworkenv.data.build import eval_results_table, eval_row, release_tables
from coworkenv.grading.consistency import with_violation
from coworkenv.grading.play import play, play_null
from coworkenv.rollout import rollout_rows
from coworkenv.synth.generate import GenerateRequest, generate
from coworkenv.validate.battery import validate_spec

STAGE_TABLE_NAMES = ("tasks", "validations", "trajectories", "sft")


def build_tables() -> dict[str, pa.Table]:
    specs, rejections = generate(GenerateRequest(n=60, seed=1))
    assert len(specs) == 60 and not rejections
    trajectories = rollout_rows(specs, "oracle") + rollout_rows(specs, "null")
    tables = release_tables(specs, [validate_spec(s) for s in specs], trajectories=trajectories)
    evals = []
    for spec in specs:
        evals += [
            eval_row(spec, run.grade, eval_id="eval-test", model=name)
            for name, run in (("oracle", play(spec)), ("null", play_null(spec)))
        ]
        if spec.prohibited:  # the oracle plus one call the first rule forbids
            evals.append(
                eval_row(
                    spec,
                    play(spec, with_violation(spec, spec.prohibited[0])).grade,
                    eval_id="eval-test",
                    model="violator",
                )
            )
    return {**{name: tables[name] for name in STAGE_TABLE_NAMES}, "eval_results": eval_results_table(evals)}


@pytest.fixture(scope="session")
def clean_tables() -> dict[str, pa.Table]:
    return build_tables()


@pytest.fixture(scope="session")
def clean_frames(clean_tables: dict[str, pa.Table]) -> dict[str, Any]:
    """pandas copies of the clean tables; tests corrupt copies of these (`frames_copy`)."""
    return {name: table.to_pandas() for name, table in clean_tables.items()}


@pytest.fixture(scope="session")
def gx_loaded() -> None:
    """Pay Great Expectations' import (~3 s) once per session, outside any single test's timing."""
    import great_expectations  # noqa: F401
