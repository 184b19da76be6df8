"""The capability-guided planner: budget moves toward weak capabilities and up the difficulty ladder."""

from __future__ import annotations

from collections import Counter

import pytest

from coworkenv.spec.capabilities import CapabilityProfile, ProfileRow
from coworkenv.synth.family import load_families
from coworkenv.synth.planner import SEED_STRIDE, PlannerConfig, make_plan

FAMILIES = [load_families().get(n) for n in load_families().names()]
CAPS = sorted({c for f in FAMILIES for c in f.capabilities})


def profile(cells: dict[str, dict[int, float]], attempts: int = 40) -> CapabilityProfile:
    rows = [
        ProfileRow(capability=c, difficulty=d, attempts=attempts, pass_rate=p)
        for c, by_d in cells.items()
        for d, p in by_d.items()
    ]
    return CapabilityProfile(model="m", rows=rows)


def per_capability(plan) -> Counter:
    counts: Counter = Counter()
    for row in plan.rows:
        counts[row.capability] += row.count
    return counts


def mean_difficulty(plan, capability: str) -> float:
    rows = [r for r in plan.rows if r.capability == capability]
    return sum(r.difficulty * r.count for r in rows) / sum(r.count for r in rows)


def test_cold_start_is_uniform_and_sums_to_n():
    plan = make_plan(1000, seed=3)
    assert sum(r.count for r in plan.rows) == 1000
    counts = per_capability(plan)
    assert set(counts) == set(CAPS)
    assert max(counts.values()) - min(counts.values()) <= 1
    for cap in CAPS:
        by_difficulty = Counter()
        for r in plan.rows:
            if r.capability == cap:
                by_difficulty[r.difficulty] += r.count
        assert set(by_difficulty) == {1, 2, 3, 4, 5}
        assert max(by_difficulty.values()) - min(by_difficulty.values()) <= 1


def test_budget_goes_to_the_learning_zone_and_exploration_stays():
    weak, strong = CAPS[0], CAPS[1]
    cells = {cap: {d: 0.95 for d in range(1, 6)} for cap in CAPS}
    cells[weak] = {1: 0.9, 2: 0.6, 3: 0.4, 4: 0.05, 5: 0.0}
    cfg = PlannerConfig()
    plan = make_plan(2000, seed=1, profile=profile(cells), config=cfg)
    counts = per_capability(plan)
    assert counts[weak] == max(counts.values())
    assert counts[weak] > 2 * counts[strong]
    floor = int(2000 * cfg.exploration_share) // len(CAPS)
    assert all(counts[c] >= floor for c in CAPS)
    assert {r.difficulty for r in plan.rows if r.capability == weak} == {2, 3}


def test_mastered_steps_up_and_hopeless_steps_down():
    cap_up, cap_down = CAPS[0], CAPS[1]
    plan = make_plan(500, seed=1, profile=profile({cap_up: {1: 0.95, 2: 0.9}, cap_down: {3: 0.0, 4: 0.02}}))
    assert {r.difficulty for r in plan.rows if r.capability == cap_up} == {3}
    assert {r.difficulty for r in plan.rows if r.capability == cap_down} == {2}
    assert "step up" in next(r.reason for r in plan.rows if r.capability == cap_up)


def test_difficulty_climbs_as_pass_rates_rise():
    cap = CAPS[0]
    means = []
    for skill in (0.0, 1.0, 2.0, 3.0, 4.0):
        # A model of growing skill: easy cells mastered first, the frontier moving right.
        cells = {cap: {d: max(0.0, min(1.0, 0.5 + 0.35 * (skill - d + 1))) for d in range(1, 6)}}
        means.append(mean_difficulty(make_plan(1000, seed=1, profile=profile(cells)), cap))
    assert means == sorted(means) and means[-1] > means[0] + 1.5


def test_unmeasured_cells_are_explored_and_thin_cells_ignored():
    cap = CAPS[0]
    plan = make_plan(500, seed=1, profile=profile({cap: {1: 1.0}}, attempts=2))
    assert {r.difficulty for r in plan.rows if r.capability == cap} == {1, 2, 3, 4, 5}


def test_seed_ranges_are_disjoint_and_plans_deterministic():
    from tests.support.processes import HASH_SEEDS, python_output

    plan = make_plan(3000, seed=5)
    code = "from coworkenv.synth.planner import make_plan\nprint(make_plan(3000, seed=5).model_dump_json())"
    for hash_seed in HASH_SEEDS:  # the same plan in fresh interpreters with other string-hash seeds
        assert python_output(code, hash_seed).strip() == plan.model_dump_json()
    taken: dict[tuple[str, int], set[int]] = {}
    for r in plan.rows:
        seeds = set(r.seeds)
        key = (r.family, r.difficulty)
        assert not (taken.setdefault(key, set()) & seeds)
        taken[key] |= seeds
        assert all(5 * SEED_STRIDE <= s < 6 * SEED_STRIDE for s in seeds)


def test_unknown_capability_in_profile_is_rejected():
    with pytest.raises(ValueError, match="unknown capability"):
        CapabilityProfile(rows=[ProfileRow(capability="telepathy", difficulty=1, attempts=1, pass_rate=0.5)])


def test_a_plan_from_a_file_is_capped_and_must_add_up():
    from pydantic import ValidationError

    from coworkenv.caps import CAPS
    from coworkenv.synth.planner import Plan

    row = {"family": "mail_triage", "capability": "communication", "difficulty": 1, "seed_start": 0}
    with pytest.raises(ValidationError, match="less than or equal to 1000000"):
        Plan.model_validate({"n": 10**12, "seed": 0, "rows": [{**row, "count": 10**12}]})
    with pytest.raises(ValidationError, match="add up to 3 tasks, not n = 5"):
        Plan.model_validate({"n": 5, "seed": 0, "rows": [{**row, "count": 3}]})
    with pytest.raises(ValidationError, match=f"at most {CAPS.plan_rows} items"):
        Plan.model_validate({"n": CAPS.plan_rows + 1, "seed": 0, "rows": [{**row, "count": 1}] * (CAPS.plan_rows + 1)})
    assert Plan.model_validate({"n": 3, "seed": 0, "rows": [{**row, "count": 3}]}).rows[0].count == 3
    cell = {"capability": "retrieval", "difficulty": 1, "attempts": 1, "pass_rate": 0.5}
    with pytest.raises(ValidationError, match=f"at most {CAPS.plan_rows} items"):
        CapabilityProfile.model_validate({"rows": [cell] * (CAPS.plan_rows + 1)})
