"""The capability profile from eval rows: the table and the planner's model agree."""

from __future__ import annotations

import json

import pytest

from coworkenv.data.schemas import TABLES
from coworkenv.errors import CoworkEnvError
from coworkenv.eval.profile import capability_profile, profile_from_rows, profile_rows, profile_table
from coworkenv.spec.capabilities import CapabilityProfile
from coworkenv.synth.planner import make_plan
from tests.support.eval_rows import task, trial


@pytest.fixture
def rows() -> list[dict]:
    return [
        *task("a", [1.0, 1.0, 0.0], capabilities=["retrieval", "communication"], difficulty=2),
        *task("b", [0.0, 0.0, 1.0], capabilities=["retrieval"], difficulty=2),
        *task("c", [1.0, 1.0, 1.0], capabilities=["retrieval"], difficulty=4),
        trial("d", 0, score=0.0, status="failed", error="timeout", capabilities=["multi_turn"], difficulty=1),
    ]


def test_counts_by_hand(rows):
    got = [(r["capability"], r["difficulty"], r["attempts"], r["passes"], r["pass_rate"]) for r in profile_rows(rows)]
    assert got == [
        ("retrieval", 2, 6, 3, 0.5),  # a and b
        ("retrieval", 4, 3, 3, 1.0),
        ("communication", 2, 3, 2, 2 / 3),
        ("multi_turn", 1, 1, 0, 0.0),  # a crashed trial is an attempt that did not pass
    ]
    assert {r["model"] for r in profile_rows(rows)} == {"oracle"}
    assert {r["model"] for r in profile_rows(rows, model="hf:tiny")} == {"hf:tiny"}


def test_the_table_and_the_planner_profile_agree(rows):
    table = profile_table(rows)
    assert table.schema.equals(TABLES["capability_profile"])
    profile = capability_profile(rows)
    assert profile == CapabilityProfile.model_validate(json.loads(profile.model_dump_json()))  # the `--profile` JSON
    assert profile_from_rows(table.to_pylist()) == profile
    assert profile.model == "oracle"
    cells = {(r.capability, r.difficulty): (r.attempts, r.pass_rate) for r in profile.rows}
    assert cells == {(r["capability"], r["difficulty"]): (r["attempts"], r["pass_rate"]) for r in table.to_pylist()}


def test_the_planner_plans_from_it(rows):
    plan = make_plan(40, seed=0, profile=capability_profile(rows))
    assert sum(row.count for row in plan.rows) == 40


def test_unknown_capabilities_and_mixed_models_are_refused(rows):
    with pytest.raises(CoworkEnvError, match="unknown capability 'retreival'; did you mean 'retrieval'"):
        profile_rows(task("x", [1.0], capabilities=["retreival"]))
    with pytest.raises(CoworkEnvError, match="several models"):
        profile_from_rows(profile_rows(rows) + profile_rows(rows, model="other"))
