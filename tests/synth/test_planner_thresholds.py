"""The planner's thresholds pinned with literal numbers: the defaults, each zone boundary, the difficulty steps, and
exact plan counts worked out by hand from the policy in `coworkenv/synth/planner.py`."""

from __future__ import annotations

from collections import Counter

import pytest

from coworkenv.errors import CoworkEnvError
from coworkenv.spec.capabilities import CAPABILITIES, CapabilityProfile, ProfileRow
from coworkenv.synth.planner import PlannerConfig, make_plan

CAPS = CAPABILITIES.names()


def profile(cells: dict[str, dict[int, float]], attempts: int = 40) -> CapabilityProfile:
    rows = [
        ProfileRow(capability=c, difficulty=d, attempts=attempts, pass_rate=p)
        for c, by_d in cells.items()
        for d, p in by_d.items()
    ]
    return CapabilityProfile(model="m", rows=rows)


def cells_of(plan, capability: str) -> dict[int, int]:
    counts: Counter = Counter()
    for row in plan.rows:
        if row.capability == capability:
            counts[row.difficulty] += row.count
    return dict(counts)


def reason_of(plan, capability: str) -> str:
    return {r.reason for r in plan.rows if r.capability == capability}.pop()


def test_the_defaults():
    cfg = PlannerConfig()
    assert (cfg.mastered_at, cfg.hopeless_at, cfg.min_attempts) == (0.85, 0.10, 5)
    assert (cfg.exploration_share, cfg.mastered_weight, cfg.hopeless_weight, cfg.unknown_weight) == (
        0.15,
        0.15,
        0.35,
        0.5,
    )
    assert cfg.difficulties == (1, 2, 3, 4, 5)


@pytest.mark.parametrize(
    ("pass_rate", "attempts", "difficulties", "reason"),
    [
        pytest.param(0.85, 40, {4: 100}, "mastered up to 3: step up", id="0.85 is mastered"),
        pytest.param(0.849, 40, {3: 100}, "learning zone", id="just under 0.85 is learning"),
        pytest.param(0.10, 40, {2: 100}, "hopeless from 3: step down", id="0.10 is hopeless"),
        pytest.param(0.101, 40, {3: 100}, "learning zone", id="just over 0.10 is learning"),
        pytest.param(0.5, 5, {3: 100}, "learning zone", id="5 attempts are measured"),
        pytest.param(0.5, 4, {1: 20, 2: 20, 3: 20, 4: 20, 5: 20}, "unmeasured: explore", id="4 attempts are not"),
    ],
)
def test_zone_boundaries(pass_rate: float, attempts: int, difficulties: dict[int, int], reason: str):
    plan = make_plan(
        100, seed=1, profile=profile({"retrieval": {3: pass_rate}}, attempts=attempts), capabilities=["retrieval"]
    )
    assert cells_of(plan, "retrieval") == difficulties
    assert reason_of(plan, "retrieval") == reason


@pytest.mark.parametrize(
    ("cells", "difficulty", "reason"),
    [
        pytest.param({1: 0.95, 2: 0.9}, 3, "mastered up to 2: step up", id="up one"),
        pytest.param({d: 1.0 for d in range(1, 6)}, 5, "mastered up to 5: step up", id="up, capped at 5"),
        pytest.param({3: 0.0, 4: 0.02}, 2, "hopeless from 3: step down", id="down one"),
        pytest.param({1: 0.0}, 1, "hopeless from 1: step down", id="down, floored at 1"),
        pytest.param({1: 0.9, 2: 0.9, 4: 0.05, 5: 0.0}, 3, "boundary above 2", id="mastered below, hopeless above"),
        pytest.param(
            {1: 0.9, 2: 0.9, 5: 0.05}, 3, "boundary above 2", id="the step is the next difficulty, not the hopeless one"
        ),
        pytest.param({4: 0.0, 5: 0.0}, 3, "hopeless from 4: step down", id="down to the next easier, not the easiest"),
        pytest.param({2: 0.85, 4: 0.0}, 3, "boundary above 2", id="0.85 counts as mastered at the boundary too"),
        pytest.param({2: 0.0, 5: 0.9}, 5, "boundary above 5", id="mastered at the top: stay there"),
    ],
)
def test_difficulty_steps(cells: dict[int, float], difficulty: int, reason: str):
    plan = make_plan(60, seed=1, profile=profile({"retrieval": cells}), capabilities=["retrieval"])
    assert cells_of(plan, "retrieval") == {difficulty: 60}
    assert reason_of(plan, "retrieval") == reason


def test_learning_zone_cells_are_weighted_by_p_times_one_minus_p():
    # weights 4·0.5·0.5 = 1.0 and 4·0.8·0.2 = 0.64: 164 × 1/1.64 = 100, 164 × 0.64/1.64 = 64
    plan = make_plan(164, seed=1, profile=profile({"retrieval": {2: 0.5, 3: 0.8}}), capabilities=["retrieval"])
    assert cells_of(plan, "retrieval") == {2: 100, 3: 64}
    # a learning cell weighs at least 0.05 (reachable once hopeless_at is lowered): 4·0.01·0.99 ≈ 0.04 → 0.05
    cfg = PlannerConfig(hopeless_at=0.0)
    plan = make_plan(
        105, seed=1, profile=profile({"retrieval": {2: 0.5, 3: 0.01}}), config=cfg, capabilities=["retrieval"]
    )
    assert cells_of(plan, "retrieval") == {2: 100, 3: 5}


def test_exploration_share_then_need_exact_counts():
    """N = 1000. Exploration: int(1000 × 0.15) = 150 over 9 capabilities = 16.67 → 17 for the first six in
    registry order, 16 for the last three. Need (the other 850): retrieval learning (max weight 1.0), data_analysis
    hopeless (0.35), authoring unmeasured (0.5), communication at a boundary (1.0), five mastered (0.15 each): mass 3.6.
    850/3.6 = 236.11 → 236 (+17 = 253, split 1 : 0.64 → 154 + 99); 850·0.35/3.6 = 82.64 → 83 (+17 = 100);
    850·0.5/3.6 = 118.06 → 118 (+17 = 135, 27 per difficulty); 850·0.15/3.6 = 35.42 → 36 for the first two mastered
    (largest remainders after data_analysis), 35 for the rest."""
    assert CAPS == [
        "retrieval",
        "data_analysis",
        "authoring",
        "communication",
        "scheduling",
        "multi_step",
        "multi_turn",
        "safety",
        "robustness",
    ]
    cells = {c: {d: 0.95 for d in range(1, 6)} for c in CAPS if c != "authoring"}
    cells["retrieval"] = {2: 0.5, 3: 0.8}
    cells["data_analysis"] = {3: 0.0, 4: 0.05}
    cells["communication"] = {1: 0.9, 2: 0.9, 4: 0.05}
    plan = make_plan(1000, seed=1, profile=profile(cells))
    assert {c: cells_of(plan, c) for c in CAPS} == {
        "retrieval": {2: 154, 3: 99},
        "data_analysis": {2: 100},
        "authoring": {1: 27, 2: 27, 3: 27, 4: 27, 5: 27},
        "communication": {3: 253},
        "scheduling": {5: 53},
        "multi_step": {5: 53},
        "multi_turn": {5: 51},
        "safety": {5: 51},
        "robustness": {5: 51},
    }


def test_exploration_alone_and_without_it():
    """Everything mastered but retrieval (p = 0.5, weight 1.0; eight × 0.15 = 1.2): with the default 15 % share the
    mastered ones keep 74–75 tasks each; without exploration they get 68–69."""
    cells = {c: {d: 0.95 for d in range(1, 6)} for c in CAPS}
    cells["retrieval"] = {2: 0.5}
    default = make_plan(1000, seed=1, profile=profile(cells))
    assert cells_of(default, "retrieval") == {2: 403}
    assert [sum(cells_of(default, c).values()) for c in CAPS[1:]] == [75, 75, 75, 75, 75, 74, 74, 74]
    none = make_plan(1000, seed=1, profile=profile(cells), config=PlannerConfig(exploration_share=0.0))
    assert cells_of(none, "retrieval") == {2: 455}
    assert [sum(cells_of(none, c).values()) for c in CAPS[1:]] == [69, 68, 68, 68, 68, 68, 68, 68]
    everything = make_plan(900, seed=1, profile=profile(cells), config=PlannerConfig(exploration_share=1.0))
    assert [sum(cells_of(everything, c).values()) for c in CAPS] == [100] * 9


def test_small_plans_exact_rows():
    """Cold start, N = 5 over 9 capabilities: one task each for the first five in registry order, difficulty 1, the first
    family (by name) exercising each; seeds start at seed × 1,000,000 per (family, difficulty)."""
    rows = [(r.family, r.capability, r.difficulty, r.count, r.seed_start, r.reason) for r in make_plan(5, seed=2).rows]
    assert rows == [
        ("cleanup_temptation", "retrieval", 1, 1, 2_000_000, "cold start: uniform"),
        ("csv_aggregate", "data_analysis", 1, 1, 2_000_000, "cold start: uniform"),
        ("chat_digest", "authoring", 1, 1, 2_000_000, "cold start: uniform"),
        ("chat_digest", "communication", 1, 1, 2_000_001, "cold start: uniform"),
        ("meeting_reschedule", "scheduling", 1, 1, 2_000_000, "cold start: uniform"),
    ]
    [one] = make_plan(1, seed=0, capabilities=["retrieval"]).rows
    assert (one.family, one.difficulty, one.count, one.seed_start) == ("cleanup_temptation", 1, 1, 0)


def test_a_given_family_list_limits_the_plan():
    from coworkenv.synth.family import load_families

    mail_triage = load_families().get("mail_triage")
    plan = make_plan(10, seed=1, families=[mail_triage])
    assert {(r.family, r.capability) for r in plan.rows} == {
        ("mail_triage", "retrieval"),
        ("mail_triage", "communication"),
    }
    assert sorted((r.capability, r.difficulty, r.count, r.seed_start) for r in plan.rows) == sorted(
        [("retrieval", d, 1, 1_000_000) for d in range(1, 6)]
        + [("communication", d, 1, 1_000_001) for d in range(1, 6)]
    )
    with pytest.raises(CoworkEnvError) as exc:
        make_plan(10, seed=1, families=[mail_triage], capabilities=["scheduling"])
    assert str(exc.value) == "no family exercises the requested capabilities"
