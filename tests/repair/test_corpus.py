"""The broken-spec corpus against the real battery and the rule-based repairers: every defect is detected with
its code; every repairable one comes out valid with lineage; every unrepairable one is rejected with a clear reason."""

from __future__ import annotations

import copy
from collections import Counter
from functools import cache

import jsonpatch
import pytest

from coworkenv.repair.loop import metrics, repair_many, repair_task
from coworkenv.repair.rules import REPAIRERS, RepairContext, non_finite, repair_determinism
from coworkenv.spec.verdict import CheckOutcome, TaskValidation
from coworkenv.validate.battery import validate_spec
from coworkenv.validate.codes import BATTERY_CODES
from tests.support.repair_corpus import EXAMPLES, corpus_files, corpus_spec, load

CORPUS = corpus_files()


@cache
def base_validation(base: str) -> TaskValidation:
    return validate_spec(load(EXAMPLES / f"{base}.json"))


@cache
def validation(name: str) -> TaskValidation:
    return validate_spec(load(next(p for p in CORPUS if p.name == name)))


def without_lineage(spec: dict) -> dict:
    return {k: v for k, v in spec.items() if k not in ("id", "meta")}


def test_the_corpus_covers_many_defects_and_both_outcomes():
    defects = [load(p)["meta"]["defect"] for p in CORPUS]
    assert len(CORPUS) >= 20
    assert len({d["kind"] for d in defects}) == len(CORPUS)
    codes = Counter(d["code"] for d in defects)
    assert set(codes) >= {
        "schema",
        "references",
        "oracle_scores_1",
        "answer_only_fails",
        "prohibited_zeroes",
        "solvable_under_faults",
        "no_leakage",
        "capabilities_consistent",
    }
    assert {d["repairable"] for d in defects} == {True, False}


def test_every_mandatory_code_has_a_rule():
    mandatory = {code for code, (severity, _, _) in BATTERY_CODES.items() if severity == "mandatory"}
    assert mandatory <= set(REPAIRERS.names())
    assert "checks_discriminate" in REPAIRERS


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.stem)
def test_defect_is_detected_with_its_code(path):
    spec = load(path)
    defect = spec["meta"]["defect"]
    assert base_validation(defect["base"]).valid, f"the base example {defect['base']} must be valid"
    result = validation(path.name)
    assert not result.valid
    assert defect["code"] in result.failed_codes, (defect, [(r.code, r.message) for r in result.failures])


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.stem)
def test_repairable_defects_are_repaired_and_the_rest_rejected(path):
    spec = load(path)
    original = copy.deepcopy(spec)
    defect = spec["meta"]["defect"]
    outcome = repair_task(spec, validation(path.name), rounds=3)
    assert spec == original, "the input spec must not be mutated"
    assert defect["code"] in outcome.initially_failed
    assert all(a.strategy.startswith("rule:") for a in outcome.attempts)
    if defect["repairable"]:
        assert outcome.valid, outcome.rejection
        repaired = outcome.spec
        assert validate_spec(repaired).valid
        assert repaired["id"] == f"{spec['id']}-r{outcome.rounds_used}"
        lineage = repaired["meta"]["repair"]
        assert repaired["meta"]["parent"] == spec["id"]
        assert repaired["meta"]["defect"] == defect
        assert lineage["round"] == outcome.rounds_used and lineage["patch"]
        assert defect["strategy"] in lineage["strategy"]
        assert jsonpatch.apply_patch(without_lineage(spec), lineage["patch"]) == without_lineage(repaired)
        kept = [a for a in outcome.attempts if a.kept]
        assert kept and kept[-1].valid_after and all(a.patch and a.notes for a in kept)
        assert outcome.rejection is None
    else:
        assert not outcome.valid and outcome.spec is None
        assert outcome.rejection and defect["code"] in outcome.rejection
        assert defect["reason"] in outcome.rejection, outcome.rejection
        assert outcome.last_spec is not None


def test_rescue_metrics_over_the_corpus():
    specs = [load(p) for p in CORPUS]
    outcomes = repair_many([(s, validation(p.name)) for s, p in zip(specs, CORPUS, strict=True)])
    m = metrics(outcomes)
    repairable = sum(s["meta"]["defect"]["repairable"] for s in specs)
    assert m.tasks == m.initially_invalid == len(CORPUS) and m.initially_valid == 0
    assert m.repaired == repairable and m.rejected == len(CORPUS) - repairable
    assert m.rescue_rate == round(repairable / len(CORPUS), 4)
    assert sum(m.rounds_histogram.values()) == repairable
    assert m.rounds_histogram["1"] >= 20 and m.rounds_histogram["2"] >= 1  # a fix can reveal a hidden defect
    assert m.attempts == sum(len(o.attempts) for o in outcomes) and m.attempts_kept >= repairable
    for code, row in m.by_code.items():
        failing = [o for o in outcomes if code in o.initially_failed]
        assert row.failed == len(failing) and row.rescued == sum(o.valid for o in failing)
    assert set(m.rejection_codes) <= set(BATTERY_CODES)


def test_a_valid_task_passes_through_untouched():
    spec = load(EXAMPLES / "04_files_region_report.json")
    outcome = repair_task(spec)
    assert outcome.valid and outcome.spec == spec and outcome.rounds_used == 0 and not outcome.attempts
    assert not outcome.repaired


def test_advisory_failures_are_repaired_only_when_asked():
    spec = load(EXAMPLES / "03_sheets_book_invoices.json")
    next(c for c in spec["checks"] if c["id"] == "travel-not-double-booked")["weight"] = 5  # a heavy guard
    assert validate_spec(spec).valid
    assert "checks_discriminate" in [r.code for r in validate_spec(spec).failures]
    assert repair_task(spec).spec == spec
    outcome = repair_task(spec, include_advisory=True)
    assert outcome.valid and outcome.repaired
    after = validate_spec(outcome.spec)
    assert after.valid and "checks_discriminate" not in [r.code for r in after.failures]
    assert outcome.attempts[0].strategy == "rule:checks_discriminate"


def test_a_crashing_rule_is_recorded_not_raised(monkeypatch):
    def broken(spec, outcome, ctx):
        raise RuntimeError("boom")

    monkeypatch.setitem(REPAIRERS._items, "no_leakage", broken)
    outcome = repair_task(corpus_spec("25_"))
    assert not outcome.valid and "RuntimeError: boom" in outcome.rejection


def test_a_patch_that_makes_things_worse_is_not_kept(monkeypatch):
    def worse(spec, outcome, ctx):
        ctx.note("broke the tools")
        return {**spec, "tools": ["teleport"]}

    monkeypatch.setitem(REPAIRERS._items, "no_leakage", worse)
    outcome = repair_task(corpus_spec("25_"), rounds=2)
    assert not outcome.valid
    assert [(a.strategy, a.kept) for a in outcome.attempts] == [("rule:no_leakage", False)]
    assert outcome.attempts[0].failed_codes_after == ["schema"]
    assert outcome.last_spec["tools"] != ["teleport"]


def test_determinism_without_an_identifiable_element_is_unrepairable():
    spec = load(EXAMPLES / "04_files_region_report.json")
    assert non_finite(spec) == []
    outcome = CheckOutcome(
        task_id=spec["id"], code="deterministic", passed=False, severity="mandatory", discriminating=False
    )
    ctx = RepairContext()
    assert repair_determinism(spec, outcome, ctx) is None
    assert "no identifiable non-deterministic element" in ctx.notes[0]
    spec["meta"]["weird"] = float("nan")
    spec["checks"][0]["extra_nan"] = float("inf")
    assert non_finite(spec) == ["/checks/0/extra_nan", "/meta/weird"]
    patched = repair_determinism(spec, outcome, ctx)
    assert patched is not None and non_finite(patched) == [] and "weird" not in patched["meta"]


def test_rules_work_from_feedback_without_details():
    spec = corpus_spec("10_")  # missing tool
    bare = TaskValidation(
        task_id=spec["id"],
        valid=False,
        discrimination=0.0,
        results=[
            CheckOutcome(
                task_id=spec["id"], code="references", passed=False, severity="mandatory", discriminating=False
            )
        ],
    )
    outcome = repair_task(spec, bare)
    assert outcome.valid and "mail_move" in outcome.spec["tools"]
