"""The bench split: held-out instruction phrasings, the same draws as the train split, and seeds no training run reaches."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from coworkenv.errors import CoworkEnvError
from coworkenv.synth.draft import Draft
from coworkenv.synth.family import FAMILIES, load_families
from coworkenv.synth.generate import GenerateRequest, check_plan, generate
from coworkenv.synth.planner import (
    MAX_RUN_SEED,
    RESERVED_SEED_BASE,
    SEED_STRIDE,
    Plan,
    PlanRow,
    bench_run_seed,
    make_plan,
)

load_families()
SEEDS = [RESERVED_SEED_BASE + k for k in range(24)]
DIFFICULTIES = (1, 2, 3, 4, 5)


def drafts(name: str, seed: int, difficulty: int) -> tuple[Draft, Draft]:
    fam = FAMILIES.get(name)
    return Draft(fam, seed, difficulty, "bench"), Draft(fam, seed, difficulty)


@pytest.mark.parametrize("name", FAMILIES.names())
def test_bench_instructions_use_no_train_phrasing(name):
    fam = FAMILIES.get(name)
    for seed in SEEDS:
        for difficulty in DIFFICULTIES:
            bench_draft, train_draft = drafts(name, seed, difficulty)
            bench, train = fam.build(bench_draft), fam.build(train_draft)
            where = f"{bench.id} (bench)"
            assert bench.instruction != train.instruction, where
            worded = [p for p in bench_draft.phrasings if p.text and p.text in bench.instruction]
            assert worded, where
            anchored = False
            for p in worded:
                assert p.held_out, (
                    f"{where}: a variant that words the instruction has no held-out phrasings: {p.templates[0]!r}"
                )
                assert len(p.held_out) >= 2, f"{where}: {p.templates[0]!r} has one held-out phrasing"
                bench_texts, train_texts = set(p.renderings("bench")), set(p.renderings("train"))
                assert p.text in bench_texts, where
                assert not (bench_texts - {""}) & train_texts, f"{where}: a held-out phrasing repeats a train one"
                seen = [t for t in train_texts if t and t in bench.instruction]
                assert not seen, f"{where}: the bench instruction contains the train phrasing {seen[0]!r}"
                anchored |= "" not in train_texts
            # A variant whose every train rendering is non-empty, none in the bench instruction: no train-split
            # rendering of this draft's instruction can equal it.
            assert anchored, where


@pytest.mark.parametrize("name", FAMILIES.names())
def test_the_split_changes_only_the_wording(name):
    """Both splits draw the same from the draft's stream: same workspace, checks and oracle (ticket_policy's held-out
    policy titles are also in its workspace)."""
    fam = FAMILIES.get(name)
    for seed in SEEDS[:6]:
        for difficulty in DIFFICULTIES:
            bench_draft, train_draft = drafts(name, seed, difficulty)
            bench, train = fam.build(bench_draft), fam.build(train_draft)
            assert [p.templates for p in bench_draft.phrasings] == [p.templates for p in train_draft.phrasings]
            assert all(p.text in p.renderings("train") for p in train_draft.phrasings)
            if name != "ticket_policy":
                assert bench.initial_state == train.initial_state
                assert bench.model_dump(exclude={"instruction"}) == train.model_dump(exclude={"instruction"})


@pytest.mark.parametrize("name", FAMILIES.names())
def test_bench_tasks_pass_the_battery(name):
    """The held-out wordings ask for the same thing: the whole battery (leakage included) holds at every difficulty."""
    from coworkenv.validate.battery import validate_spec

    fam = FAMILIES.get(name)
    for seed in SEEDS[:4]:
        for difficulty in DIFFICULTIES:
            verdict = validate_spec(fam.build(Draft(fam, seed, difficulty, "bench")))
            assert verdict.valid, (verdict.task_id, verdict.failed_codes)


def test_bench_phrasings_vary():
    """Each family's bench split uses more than one held-out wording of its main request."""
    for name in FAMILIES.names():
        fam = FAMILIES.get(name)
        texts = {fam.build(Draft(fam, seed, 3, "bench")).instruction[:40] for seed in SEEDS}
        assert len(texts) >= 2, name


def test_an_unknown_split_is_refused():
    with pytest.raises(ValueError, match="split must be one of train, bench"):
        Draft(FAMILIES.get("mail_triage"), 0, 1, "test")  # type: ignore[arg-type]


def test_run_seeds_stop_below_the_reserved_range():
    assert (MAX_RUN_SEED + 1) * SEED_STRIDE == RESERVED_SEED_BASE
    GenerateRequest(seed=MAX_RUN_SEED)
    with pytest.raises(ValidationError, match="reserved for the held-out benchmark suite"):
        GenerateRequest(seed=MAX_RUN_SEED + 1)
    plan = make_plan(500, MAX_RUN_SEED)
    assert max(row.seed_start + row.count for row in plan.rows) <= RESERVED_SEED_BASE
    bench = make_plan(50, bench_run_seed(0))
    assert min(row.seed_start for row in bench.rows) >= RESERVED_SEED_BASE
    with pytest.raises(CoworkEnvError, match="between 0 and"):
        bench_run_seed(-1)


def test_a_plan_with_reserved_seeds_is_refused_outside_the_bench_split():
    row = PlanRow(
        family="mail_triage", capability="communication", difficulty=1, count=2, seed_start=RESERVED_SEED_BASE - 1
    )
    plan = Plan(n=2, seed=0, rows=[row])
    with pytest.raises(CoworkEnvError, match="reserved for the held-out benchmark suite"):
        check_plan(plan)
    with pytest.raises(CoworkEnvError, match="reserved"):
        generate(GenerateRequest(n=2), plan)
    tasks, rejections = generate(GenerateRequest(n=2), plan, split="bench")
    assert not rejections and [t.meta.seed for t in tasks] == [RESERVED_SEED_BASE - 1, RESERVED_SEED_BASE]
    with pytest.raises(CoworkEnvError, match="procedural only"):
        generate(GenerateRequest(n=2, generator="llm"), plan, split="bench")
