"""A grade made by `grade` hashes its evidence only when the hash is read or the grade is dumped, compared, copied
or pickled; whichever comes first, the hash is the evidence's (docs/design/pipeline.md, "Bounded memory")."""

from __future__ import annotations

import copy
import json
import pickle

import pytest

from coworkenv.agents import make_policy
from coworkenv.episode import run_episode
from coworkenv.grading import grade, grade_trajectory
from coworkenv.grading.score import Grade
from tests.support.builders import evidence as built
from tests.support.builders import rich_spec


@pytest.fixture(scope="module")
def graded():
    spec = rich_spec()
    trajectory, evidence = run_episode(spec, make_policy("oracle", spec))
    return spec, trajectory, evidence


def fresh(graded) -> tuple[Grade, str]:
    spec, trajectory, _ = graded
    made = grade_trajectory(spec, trajectory)
    assert made.__dict__["evidence_hash"] == ""  # not hashed yet: grading alone does not need it
    expected = run_episode(spec, make_policy("oracle", spec))[1].evidence_hash
    return made, expected


@pytest.mark.parametrize(
    "read",
    [
        lambda g: g.evidence_hash,
        lambda g: g.model_dump()["evidence_hash"],
        lambda g: json.loads(g.model_dump_json())["evidence_hash"],
        lambda g: json.loads(json.dumps({"grades": [g.model_dump(mode="json")]}))["grades"][0]["evidence_hash"],
        lambda g: pickle.loads(pickle.dumps(g)).__dict__["evidence_hash"],
        lambda g: copy.deepcopy(g).evidence_hash,
        lambda g: g.model_copy().evidence_hash,
        lambda g: repr(g).split("evidence_hash='")[1].split("'")[0],
    ],
    ids=["attribute", "dump", "dump_json", "dump_mode_json", "pickle", "deepcopy", "model_copy", "repr"],
)
def test_every_way_of_reading_a_grade_gives_its_evidence_hash(graded, read) -> None:
    made, expected = fresh(graded)
    assert read(made) == expected
    assert made.evidence_hash == expected


def test_a_lazily_hashed_grade_equals_the_same_grade_from_data(graded) -> None:
    made, expected = fresh(graded)
    stored = Grade.model_validate_json(made.model_dump_json())
    again, _ = fresh(graded)
    assert again == stored and stored == made and again == made
    assert stored.evidence_hash == expected


def test_a_copy_given_its_own_hash_keeps_it(graded) -> None:
    made, _ = fresh(graded)
    assert made.model_copy(update={"evidence_hash": "mine"}).evidence_hash == "mine"


def test_the_empty_grade_hashes_lazily_too(graded) -> None:
    spec, _, _ = graded
    ev = built(spec)
    made = grade(spec, ev)
    assert made.empty and made.__dict__["evidence_hash"] == ""
    assert made.evidence_hash == ev.evidence_hash
