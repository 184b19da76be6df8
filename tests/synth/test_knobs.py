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
        assert (
            harder.effects > easier.effects
            and harder.distractors > easier.distractors
            and harder.fault_rate > easier.fault_rate
        )
        assert harder.ambiguity >= easier.ambiguity and harder.rounds >= easier.rounds
        assert harder != easier
    assert set(Knobs.model_fields) == {"effects", "distractors", "ambiguity", "fault_rate", "rounds"}


def _effects(spec) -> int:
    return sum(
        1
        for step in spec.solution
        if getattr(step, "tool", None) and TOOLS.get(step.tool).kind in ("write", "destructive")
    )


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
    if "effects" in fam.knobs and name not in {
        "meeting_schedule"
    }:  # one meeting however hard: its effects knob adds attendees
        assert sum(map(_effects, hard)) > sum(map(_effects, easy))


def _records(value) -> int:
    """What a workspace holds, counted: every item of every list and every line of every text (a CSV's rows)."""
    if isinstance(value, dict):
        return sum(_records(v) for v in value.values())
    if isinstance(value, list):
        return len(value) + sum(_records(v) for v in value)
    return value.count("\n") if isinstance(value, str) else 0


def _with(fam, seed: int, **knobs):
    """The family's task at difficulty 1 with only the given knobs changed (the same random draws otherwise)."""
    draft = Draft(fam, seed, 1)
    draft.knobs = DIFFICULTY_KNOBS[1].model_copy(update=knobs)
    return fam.build(draft)


DISTRACTOR_STEPS = sorted({k.distractors for k in DIFFICULTY_KNOBS.values()})


@pytest.mark.parametrize("name", [n for n in FAMILIES.names() if "distractors" in FAMILIES.get(n).knobs])
def test_each_step_of_the_distractors_knob_alone_adds_records(name: str):
    """Tests of what a family does with its knob, not of the table: a family that ignored the knob past some value
    (capped its distractors, fixed a table's rows) would hold as many records at one step as at the one below."""
    fam = FAMILIES.get(name)
    for seed in SEEDS:
        sizes = [_records(_with(fam, seed, distractors=k).workspace.model_dump(mode="json")) for k in DISTRACTOR_STEPS]
        assert sizes == sorted(sizes) and len(set(sizes)) == len(sizes), (
            name,
            seed,
            dict(zip(DISTRACTOR_STEPS, sizes, strict=True)),
        )


def test_mail_triage_leaves_every_distractor_in_the_inbox():
    fam = FAMILIES.get("mail_triage")
    for k in DISTRACTOR_STEPS:
        spec = _with(fam, 0, distractors=k)
        (kept,) = [c for c in spec.checks if c.id == "others-left-alone"]
        assert len(kept.ids) >= k  # each distractor (and look-alike) must stay where it was


def test_csv_aggregate_rows_grow_with_the_distractors():
    fam = FAMILIES.get("csv_aggregate")
    rows = []
    for k in DISTRACTOR_STEPS:
        files = _with(fam, 0, distractors=k).workspace.model_dump(mode="json")["files"]
        rows.append(max(text.count("\n") for text in files.values()))
    assert rows == sorted(rows) and len(set(rows)) == len(rows) and rows[0] > 2
