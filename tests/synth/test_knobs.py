"""Difficulty knobs: the table pinned with literal numbers, every step harder than the one below, and the families'
tasks at difficulty 5 measurably harder than at difficulty 1 along the knobs each family declares."""

from __future__ import annotations

import pytest

from coworkenv.synth.draft import Draft
from coworkenv.synth.family import FAMILIES, load_families
from coworkenv.synth.knobs import DIFFICULTY_KNOBS, Knobs
from coworkenv.workspace.tools import TOOLS

load_families()
SEEDS = range(4)


def test_the_knob_table():
    assert {d: k.model_dump() for d, k in DIFFICULTY_KNOBS.items()} == {
        1: {"effects": 1, "distractors": 2, "ambiguity": 0, "fault_rate": 0.1, "rounds": 1},
        2: {"effects": 2, "distractors": 4, "ambiguity": 0, "fault_rate": 0.15, "rounds": 1},
        3: {"effects": 3, "distractors": 6, "ambiguity": 1, "fault_rate": 0.2, "rounds": 2},
        4: {"effects": 4, "distractors": 9, "ambiguity": 1, "fault_rate": 0.3, "rounds": 2},
        5: {"effects": 5, "distractors": 12, "ambiguity": 2, "fault_rate": 0.4, "rounds": 3},
    }


def test_every_step_is_harder_than_the_one_below():
    for d in (2, 3, 4, 5):
        easier, harder = DIFFICULTY_KNOBS[d - 1], DIFFICULTY_KNOBS[d]
        assert harder.effects > easier.effects and harder.distractors > easier.distractors and harder.fault_rate > easier.fault_rate
        assert harder.ambiguity >= easier.ambiguity and harder.rounds >= easier.rounds
        assert harder != easier
    assert set(Knobs.model_fields) == {"effects", "distractors", "ambiguity", "fault_rate", "rounds"}


def _effects(spec) -> int:
    return sum(1 for step in spec.solution if getattr(step, "tool", None) and TOOLS.get(step.tool).kind in ("write", "destructive"))


@pytest.mark.parametrize("name", FAMILIES.names())
def test_difficulty_5_tasks_are_harder_than_difficulty_1(name: str):
    fam = FAMILIES.get(name)
    easy = [fam.build(Draft(fam, seed, 1)) for seed in SEEDS]
    hard = [fam.build(Draft(fam, seed, 5)) for seed in SEEDS]
    for e, h in zip(easy, hard, strict=True):
        assert e.meta.knobs == DIFFICULTY_KNOBS[1].model_dump() and h.meta.knobs == DIFFICULTY_KNOBS[5].model_dump()
        assert len(h.to_json()) > len(e.to_json())  # distractors: more records to search through
        if "fault_rate" in fam.knobs:
            assert (e.faults.rate, h.faults.rate) == (0.1, 0.4)
        if "rounds" in fam.knobs:
            assert len(h.user.facts) > len(e.user.facts)
    if "effects" in fam.knobs and name not in {"meeting_schedule"}:  # one meeting however hard: its effects knob adds attendees
        assert sum(map(_effects, hard)) > sum(map(_effects, easy))
