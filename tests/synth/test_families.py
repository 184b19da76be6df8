"""Every procedural family: valid specs that pass the grading-consistency gate, deterministically, at every difficulty."""

from __future__ import annotations

import pytest

from coworkenv.grading.consistency import consistency_gate
from coworkenv.spec import CAPABILITIES, SERVICE_NAMES
from coworkenv.synth.draft import Draft
from coworkenv.synth.family import FAMILIES, load_families

load_families()
SEEDS = range(12)


def build(name: str, seed: int, difficulty: int):
    fam = FAMILIES.get(name)
    return fam.build(Draft(fam, seed, difficulty))


@pytest.mark.parametrize("name", FAMILIES.names())
@pytest.mark.parametrize("difficulty", [1, 2, 3, 4, 5])
def test_family_tasks_pass_the_consistency_gate(name, difficulty):
    for seed in SEEDS:
        spec = build(name, seed, difficulty)
        gate = consistency_gate(spec)
        assert gate.passed, (spec.id, gate.failures)
        assert spec.family == name and spec.difficulty == difficulty
        assert set(spec.capabilities) <= set(FAMILIES.get(name).capabilities) | {"robustness"}


FAMILY_DIGESTS = """
import hashlib, json
from coworkenv.synth.draft import Draft
from coworkenv.synth.family import FAMILIES, load_families
load_families()
def digest(name, seed, difficulty):
    fam = FAMILIES.get(name)
    return hashlib.sha256(fam.build(Draft(fam, seed, difficulty)).to_json().encode()).hexdigest()
print(json.dumps({f"{name}/{seed}/{difficulty}": digest(name, seed, difficulty)
                  for name in FAMILIES.names() for seed in (0, 7) for difficulty in (1, 3, 5)}))
"""


def test_families_build_the_same_bytes_in_other_processes():
    """Not one value compared with itself: this process and two fresh interpreters with other string-hash seeds."""
    import hashlib
    import json

    from tests.support.processes import HASH_SEEDS, python_output

    here = {
        f"{name}/{seed}/{difficulty}": hashlib.sha256(build(name, seed, difficulty).to_json().encode()).hexdigest()
        for name in FAMILIES.names()
        for seed in (0, 7)
        for difficulty in (1, 3, 5)
    }
    assert len(here) == len(FAMILIES.names()) * 6
    for hash_seed in HASH_SEEDS:
        assert json.loads(python_output(FAMILY_DIGESTS, hash_seed)) == here


@pytest.mark.parametrize("name", FAMILIES.names())
def test_family_depends_on_the_seed(name):
    assert build(name, 1, 3).to_json() != build(name, 2, 3).to_json()


@pytest.mark.parametrize("name", FAMILIES.names())
def test_family_declares_what_its_tasks_use(name):
    fam = FAMILIES.get(name)
    assert fam.description, "the builder's docstring describes the family"
    assert set(fam.capabilities) <= set(CAPABILITIES.names())
    used: set[str] = set()
    for seed in SEEDS:
        for difficulty in (1, 5):
            spec = build(name, seed, difficulty)
            used |= {step.tool.split("_")[0] for step in spec.solution if hasattr(step, "tool")}
            assert any(c.kind != "unchanged" for c in spec.checks)
    assert used <= set(fam.services), f"oracle uses services {sorted(used - set(fam.services))} it does not declare"
    assert set(fam.services) <= set(SERVICE_NAMES)
