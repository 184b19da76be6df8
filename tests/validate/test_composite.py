"""The battery on a spec with group checks and `requires`: it passes every code and the consistency gate, and a
broken member is caught with its place in the group."""

from __future__ import annotations

from typing import Any

from coworkenv.grading import consistency_gate
from coworkenv.spec.task import TaskSpec
from coworkenv.validate.battery import validate_spec
from tests.validate.test_battery import BASE, outcome, spec

ARCHIVED, SENT, AMOUNT = BASE["checks"]
READ = {"id": "searched", "kind": "tool_called", "tool": "mail_search"}
GROUPED: list[dict[str, Any]] = [
    READ,
    {"id": "filed", "kind": "all_of", "weight": 2.0, "checks": [ARCHIVED, SENT]},
    {**AMOUNT, "requires": ["searched"]},  # no credit for the amount unless the invoice was looked up
    {
        "id": "kept",
        "kind": "any_of",
        "weight": 0.5,
        "checks": [
            {"id": "no-delete", "kind": "tool_not_called", "tool": "mail_delete"},
            {"id": "lunch-untouched", "kind": "unchanged", "service": "calendar"},
        ],
    },
]


def grouped(**member_changes: Any) -> dict[str, Any]:
    checks = [dict(c) for c in GROUPED]
    checks[1] = {**checks[1], "checks": [{**ARCHIVED, **member_changes}, SENT]}
    return spec(checks=checks)


def test_a_spec_with_groups_and_requires_passes_the_battery_and_the_gate():
    v = validate_spec(grouped())
    assert v.valid and all(r.passed for r in v.results), [(r.code, r.message) for r in v.failures]
    assert v.discrimination == 1.0
    # the guard group holds untouched by design: it is left out of checks_discriminate like the guards it holds
    assert outcome(v, "checks_discriminate").details["holding"] == []
    assert consistency_gate(TaskSpec.model_validate(grouped())).passed


def test_a_member_naming_nothing_is_found_in_its_group():
    v = validate_spec(grouped(ids=["m9"]))
    row = outcome(v, "references")
    assert (
        not row.passed
        and row.details["missing"][0]["where"] == "checks[1].checks[0]"
        and row.details["missing"][0]["check"] == "filed"
    )


def test_a_member_the_oracle_fails_fails_the_group():
    v = validate_spec(grouped(folder="trash"))
    row = outcome(v, "oracle_scores_1")
    assert not row.passed and row.details["failed_checks"][0]["id"] == "filed"
    assert "filed (1 of 2 fail: archived: " in row.message


def test_a_requirement_the_oracle_never_meets_is_named():
    checks = [{**READ, "tool": "mail_read"}, *GROUPED[1:]]
    row = outcome(validate_spec(spec(checks=checks)), "oracle_scores_1")
    assert "amount (answer number 1250 ≈ 1250; no credit: required check(s) searched did not pass)" in row.message


def test_leaks_and_capabilities_see_group_members():
    leaky = grouped()
    leaky["instruction"] += " It is 1,250 EUR."
    leaky["checks"][2] = {"id": "either", "kind": "any_of", "checks": [AMOUNT]}
    assert outcome(validate_spec(leaky), "no_leakage").details["leaks"][0]["check"] == "amount"
    analysis = grouped()
    analysis["capabilities"] = ["communication", "data_analysis"]
    analysis["checks"][2] = {"id": "either", "kind": "any_of", "checks": [AMOUNT]}  # answer_number, nested
    assert outcome(validate_spec(analysis), "capabilities_consistent").passed
