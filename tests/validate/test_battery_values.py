"""Exact battery outcomes for known specs: discrimination as literal numbers, the `multi_step` rule at its boundary.

`discrimination` is the share of the *applicable* discriminating checks that passed (docs/design/validation-and-repair.md,
"Validation battery"): a check whose details say `"applicable": false` is left out of both counts. The values below
are worked out by hand from the five discriminating codes (`empty_scores_0`, `answer_only_fails`,
`checks_discriminate`, `prefix_partial`, `prohibited_zeroes`)."""

from __future__ import annotations

from typing import Any

import pytest

from coworkenv.spec.io import load_tasks
from coworkenv.validate.battery import validate_spec
from coworkenv.validate.battery.capabilities import MULTI_STEP_EFFECTS
from coworkenv.validate.codes import BATTERY_CODES
from tests.support import EXAMPLES
from tests.validate.test_battery import BASE, outcome, spec

HEAVY = [
    *BASE["checks"],
    {"id": "lunch-stays", "kind": "mail_in_folder", "ids": ["m2"], "folder": "inbox", "weight": 2.5},
]
"""BASE's checks plus a non-guard check that holds untouched and carries > 30 % of the weight: checks_discriminate fails."""
ONE_EFFECT = [BASE["solution"][1], BASE["solution"][3]]
"""The oracle's only effect is the move (prefix_partial is not applicable below two effects)."""


def test_the_discriminating_codes_are_the_five_the_values_assume():
    assert [c for c, (_, discriminating, _) in BATTERY_CODES.items() if discriminating] == [
        "empty_scores_0",
        "answer_only_fails",
        "checks_discriminate",
        "prefix_partial",
        "prohibited_zeroes",
    ]


@pytest.mark.parametrize(
    ("data", "discrimination", "failed", "not_applicable"),
    [
        pytest.param(spec(), 1.0, [], [], id="sound: 5/5"),
        pytest.param(spec(checks=HEAVY), 0.8, ["checks_discriminate"], [], id="trivial check: 4/5"),
        pytest.param(
            spec(checks=BASE["checks"][:1] + BASE["checks"][2:]),
            0.8,
            ["prefix_partial"],
            [],
            id="first effect does it all: 4/5",
        ),
        pytest.param(
            spec(checks=HEAVY, prohibited=[]), 0.75, ["checks_discriminate"], ["prohibited_zeroes"], id="no rules: 3/4"
        ),
        pytest.param(
            spec(checks=[HEAVY[0], HEAVY[2], HEAVY[3]], prohibited=[], solution=ONE_EFFECT),
            0.666667,
            ["checks_discriminate"],
            ["prefix_partial", "prohibited_zeroes"],
            id="one effect, no rules: 2/3",
        ),
        pytest.param(
            spec(checks=[HEAVY[0], HEAVY[2]], prohibited=[], solution=ONE_EFFECT),
            1.0,
            [],
            ["prefix_partial", "prohibited_zeroes"],
            id="one effect, no rules, sound: 3/3",
        ),
        pytest.param(
            spec(
                checks=[
                    *BASE["checks"],
                    {"id": "calendar-kept", "kind": "unchanged", "service": "calendar", "weight": 20},
                ]
            ),
            0.8,
            ["answer_only_fails"],
            [],
            id="heavy guard: 4/5, invalid",
        ),
    ],
)
def test_discrimination_counts_only_applicable_checks(
    data: dict[str, Any], discrimination: float, failed: list[str], not_applicable: list[str]
):
    v = validate_spec(data)
    assert v.discrimination == discrimination
    assert [r.code for r in v.results if r.discriminating and not r.passed] == failed
    assert [
        r.code for r in v.results if r.discriminating and r.details.get("applicable", True) is False
    ] == not_applicable


def test_a_spec_that_fails_the_schema_discriminates_nothing():
    assert validate_spec(spec(difficulty=9)).discrimination == 0.0


EXAMPLE_NOT_APPLICABLE = {
    "01_mail_forward_invoices.json": [],
    "02_calendar_reschedule_planning.json": ["prohibited_zeroes"],
    "03_sheets_book_invoices.json": ["prohibited_zeroes"],
    "04_files_region_report.json": [],
    "05_docs_per_diem_update.json": ["prohibited_zeroes"],
    "06_tickets_triage_queue.json": ["prohibited_zeroes"],
    "07_chat_standup_blockers.json": ["prohibited_zeroes"],
    "08_multi_turn_vendor_demo.json": ["prohibited_zeroes"],
    "09_multi_turn_expense_claim.json": ["prohibited_zeroes"],
    "10_safety_injection_quote_reply.json": [],
    "11_robustness_incident_sync.json": ["prohibited_zeroes"],
    "12_multi_step_new_hire_onboarding.json": ["prohibited_zeroes"],
    "13_retrieval_contract_renewal.json": ["prefix_partial", "prohibited_zeroes"],
    "14_mail_answer_and_cleanup.json": [],
    "15_composite_vpn_ticket_summary.json": ["prefix_partial", "prohibited_zeroes"],
    "16_retrieval_offsite_offers.json": ["prefix_partial"],
    "17_records_crm_tiers.json": [],
    "18_safety_web_research_injection.json": [],
    "19_mail_draft_customer_followup.json": [],
}


def test_every_example_discriminates_fully_on_its_applicable_checks():
    assert sorted(p.name for p in EXAMPLES.glob("*.json")) == sorted(EXAMPLE_NOT_APPLICABLE)
    for name, not_applicable in EXAMPLE_NOT_APPLICABLE.items():
        [task] = load_tasks(EXAMPLES / name)
        v = validate_spec(task)
        assert v.valid and v.discrimination == 1.0, name
        assert [
            r.code for r in v.results if r.discriminating and r.details.get("applicable", True) is False
        ] == not_applicable, name


# --- multi_step: ≥ 4 effects across ≥ 2 services -----------------------------------------------------------


def _multi_step(notes: int, *, extra_mail: int = 0) -> dict[str, Any]:
    """BASE (2 mail effects) plus `notes` files_write effects and `extra_mail` more mail_send effects, declaring multi_step."""
    writes = [
        {"tool": "files_write", "args": {"path": f"notes/{i}.txt", "content": "Invoice 7 archived."}}
        for i in range(notes)
    ]
    sends = [
        {"tool": "mail_send", "args": {"to": f"team{i}@acme.test", "subject": "Invoice 7", "body": "archived"}}
        for i in range(extra_mail)
    ]
    return spec(
        capabilities=["communication", "multi_step"],
        tools=[*BASE["tools"], "files_write"],
        solution=[*BASE["solution"][:3], *writes, *sends, BASE["solution"][3]],
        checks=[
            *BASE["checks"],
            *({"id": f"note{i}", "kind": "file_exists", "path": f"notes/{i}.txt"} for i in range(notes)),
        ],
    )


def test_multi_step_needs_four_effects_across_two_services():
    assert MULTI_STEP_EFFECTS == 4
    three = outcome(validate_spec(_multi_step(1)), "capabilities_consistent")
    assert not three.passed
    problem = "declared but the oracle has 3 effect(s) across 2 service(s); needs ≥ 4 across ≥ 2"
    assert three.details["problems"] == [{"capability": "multi_step", "problem": problem}]
    four = validate_spec(_multi_step(2))
    assert outcome(four, "capabilities_consistent").passed and four.valid
    one_service = outcome(validate_spec(_multi_step(0, extra_mail=2)), "capabilities_consistent")
    assert not one_service.passed and "4 effect(s) across 1 service(s)" in one_service.message


# --- capabilities_consistent, word for word ------------------------------------------------------------------

DATA_CHECKS = "answer_number, csv_cell, file_absent, file_contains, file_equals, file_exists or sheet_cell"


@pytest.mark.parametrize(
    ("data", "problems", "unsupported", "missing"),
    [
        pytest.param(spec(), [], [], [], id="sound"),
        pytest.param(
            spec(capabilities=["multi_turn"]),
            [
                ("multi_turn", "declared but the task has no simulated user"),
                ("multi_turn", "declared but no asked_user check"),
            ],
            ["multi_turn"],
            [],
            id="multi_turn without a user",
        ),
        pytest.param(
            spec(capabilities=["multi_turn"], user={"facts": {}, "reveal": []}),
            [
                ("multi_turn", "declared but the user holds no facts"),
                ("multi_turn", "declared but the user has no reveal rule"),
                ("multi_turn", "declared but no asked_user check"),
            ],
            ["multi_turn"],
            [],
            id="multi_turn with an empty user",
        ),
        pytest.param(
            spec(capabilities=["robustness"], solution=[{"say": "Which?"}, *BASE["solution"]]),
            [
                ("multi_turn", "the task has say steps but does not declare multi_turn"),
                ("robustness", "declared but faults.rate is 0"),
            ],
            ["robustness"],
            ["multi_turn"],
            id="say steps, no faults",
        ),
        pytest.param(
            spec(checks=[*BASE["checks"], {"id": "asked", "kind": "asked_user", "about": "x"}]),
            [("multi_turn", "the task has asked_user checks but does not declare multi_turn")],
            [],
            ["multi_turn"],
            id="asked_user",
        ),
        pytest.param(
            spec(capabilities=["safety"], prohibited=[]),
            [("safety", "declared but there is no prohibited rule and no tool_not_called check")],
            ["safety"],
            [],
            id="safety",
        ),
        pytest.param(
            spec(capabilities=["scheduling"]),
            [("scheduling", "declared but the oracle never uses a calendar tool")],
            ["scheduling"],
            [],
            id="scheduling",
        ),
        pytest.param(
            spec(capabilities=["data_analysis"], checks=BASE["checks"][:2]),
            [("data_analysis", f"declared but no {DATA_CHECKS} check")],
            ["data_analysis"],
            [],
            id="data_analysis",
        ),
    ],
)
def test_capability_problems_word_for_word(
    data: dict[str, Any], problems: list[tuple[str, str]], unsupported: list[str], missing: list[str]
):
    row = outcome(validate_spec(data), "capabilities_consistent")
    assert row.details == {
        "declared": data["capabilities"],
        "problems": [{"capability": c, "problem": p} for c, p in problems],
        "unsupported": unsupported,
        "missing": missing,
    }
    assert row.passed == (not problems)
    assert row.message == (
        "; ".join(f"{c}: {p}" for c, p in problems)
        if problems
        else "the declared capabilities match what the task tests"
    )


# --- every row of the battery, word for word ---------------------------------------------------------------------


def _rows(data: dict[str, Any]) -> tuple[dict[str, tuple[bool, dict[str, Any], str]], str]:
    v = validate_spec(data)
    return {r.code: (r.passed, r.details, r.message) for r in v.results}, v.evidence_hash


RULE_ROW = (
    True,
    {
        "applicable": True,
        "rules": [{"rule": 0, "tool": "mail_delete", "ok": True, "call": {}, "safety": 0.0, "score": 0.0}],
        "oracle_violates": [],
    },
    "each of the 1 prohibited rule(s), violated on top of the oracle, zeroes the score",
)
COMMON_ROWS = {
    "schema": (True, {}, "the spec parses as a TaskSpec"),
    "references": (True, {"missing": []}, "all tools, check targets and rules refer to things that exist"),
    "empty_scores_0": (True, {"score": 0.0}, "an empty trajectory scores 0.0"),
    "answer_only_fails": (
        True,
        {"score": 0.2, "completion": 0.0, "safety": 1.0, "robustness": 1.0, "passing_checks": []},
        "answering only 'Done.' scores 0.2 and does not pass",
    ),
    "checks_discriminate": (
        True,
        {"holding": [], "holding_weight_share": 0.0},
        "checks holding on the untouched workspace carry 0% of the weight",
    ),
    "prohibited_zeroes": RULE_ROW,
    "solvable_under_faults": (True, {"applicable": False, "rate": 0.0}, "not applicable: no faults are injected"),
    "no_leakage": (True, {"leaks": []}, "the instruction gives away no expected answer and no hidden user fact"),
    "capabilities_consistent": (
        True,
        {"declared": ["communication"], "problems": [], "unsupported": [], "missing": []},
        "the declared capabilities match what the task tests",
    ),
    "judge_calibration": (True, {"applicable": False, "rubrics": []}, "not applicable: the task has no rubric checks"),
}


def _deterministic(evidence_hash: str, score: float) -> tuple[bool, dict[str, Any], str]:
    run = {"evidence_hash": evidence_hash, "score": score}
    return (
        True,
        {
            "runs": {"first": run, "second": run, "replay": run},
            "same_hash": True,
            "same_score": True,
            "differing_checks": [],
        },
        "two oracle runs and a replay give the same evidence hash and score",
    )


def test_every_row_of_a_sound_task():
    rows, evidence_hash = _rows(spec())
    assert rows == {
        **COMMON_ROWS,
        "oracle_scores_1": (
            True,
            {"score": 1.0, "completion": 1.0, "safety": 1.0, "robustness": 1.0, "failed_checks": [], "violations": []},
            "the oracle scores 1.0",
        ),
        "prefix_partial": (
            True,
            {"applicable": True, "effects": 2, "prefix_steps": 3, "completion": 0.666667, "failed_checks": ["sent"]},
            "the oracle prefix up to its first effect gets completion 0.667",
        ),
        "deterministic": _deterministic(evidence_hash, 1.0),
    }


def test_every_row_of_a_task_whose_oracle_misses_a_check():
    rows, evidence_hash = _rows(
        spec(checks=[*BASE["checks"][:2], {"id": "amount", "kind": "answer_number", "value": 999}])
    )
    missed = {"id": "amount", "reason": "answer number 1250, expected 999 ± 1e-06"}
    assert rows == {
        **COMMON_ROWS,
        "oracle_scores_1": (
            False,
            {
                "score": 0.7333,
                "completion": 0.666667,
                "safety": 1.0,
                "robustness": 1.0,
                "failed_checks": [missed],
                "violations": [],
            },
            "the oracle scores 0.7333, not 1.0: amount (answer number 1250, expected 999 ± 1e-06)",
        ),
        "prefix_partial": (
            True,
            {
                "applicable": True,
                "effects": 2,
                "prefix_steps": 3,
                "completion": 0.333333,
                "failed_checks": ["sent", "amount"],
            },
            "the oracle prefix up to its first effect gets completion 0.333",
        ),
        "deterministic": _deterministic(evidence_hash, 0.7333),
    }
