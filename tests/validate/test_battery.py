"""The validation battery (docs/design/validation-and-repair.md, "Validation battery"): every code passes on a sound
spec and fails on a spec broken for it; procedural families and the hand-written examples are valid; bad input never
raises."""

from __future__ import annotations

import copy
import dataclasses
import json
from typing import Any

import pytest

from coworkenv.checks.text import numbers_in
from coworkenv.spec.io import load_tasks
from coworkenv.spec.task import TaskSpec
from coworkenv.spec.verdict import TaskValidation
from coworkenv.synth.family import load_families
from coworkenv.synth.generate import build_task
from coworkenv.validate import battery
from coworkenv.validate.battery import leaks, validate_spec, validate_spec_json
from coworkenv.validate.codes import BATTERY, BATTERY_CODES
from tests.support import ROOT  # noqa: E402

EXAMPLES = ROOT / "examples" / "tasks"

MAIL = [
    {
        "id": "m1",
        "folder": "inbox",
        "from": "billing@globex.test",
        "to": ["me@acme.test"],
        "subject": "Invoice 7",
        "body": "Amount due: 1,250 EUR by 2026-12-20.",
        "date": "2026-11-30T09:00:00Z",
    },
    {
        "id": "m2",
        "folder": "inbox",
        "from": "ana@acme.test",
        "to": ["me@acme.test"],
        "subject": "Lunch?",
        "body": "Noon?",
        "date": "2026-11-30T10:00:00Z",
    },
]

BASE: dict[str, Any] = {
    "id": "t-base",
    "family": "test",
    "capabilities": ["communication"],
    "difficulty": 1,
    "instruction": "Archive the Globex invoice email, send its amount to accounting@acme.test and tell me the amount.",
    "workspace": {"mail": {"messages": MAIL}},
    "tools": ["mail_search", "mail_read", "mail_move", "mail_send", "mail_delete"],
    "prohibited": [{"tool": "mail_delete", "reason": "archive, not delete"}],
    "checks": [
        {"id": "archived", "kind": "mail_in_folder", "ids": ["m1"], "folder": "archive"},
        {"id": "sent", "kind": "mail_sent", "to": "accounting@acme.test", "body_contains": ["1,250"]},
        {"id": "amount", "kind": "answer_number", "value": 1250},
    ],
    "solution": [
        {"tool": "mail_search", "args": {"query": "invoice"}},
        {"tool": "mail_move", "args": {"id": "m1", "folder": "archive"}},
        {
            "tool": "mail_send",
            "args": {"to": "accounting@acme.test", "subject": "Invoice 7", "body": "Globex invoice 7: 1,250 EUR."},
        },
        {"answer": "1,250 EUR; archived and sent to accounting."},
    ],
}


def spec(**changes: Any) -> dict[str, Any]:
    data = copy.deepcopy(BASE)
    data.update(copy.deepcopy(changes))
    return data


def outcome(validation: TaskValidation, code: str):
    [row] = [r for r in validation.results if r.code == code]
    return row


def test_every_code_is_registered_in_order():
    assert list(BATTERY) == list(BATTERY_CODES)
    for code, (severity, discriminating, _) in BATTERY_CODES.items():
        assert BATTERY.get(code).severity == severity and BATTERY.get(code).discriminating == discriminating


def test_sound_spec_passes_everything():
    v = validate_spec(spec())
    assert [r.code for r in v.results] == list(BATTERY_CODES)
    assert all(r.passed for r in v.results), [(r.code, r.message) for r in v.failures]
    assert v.valid and v.discrimination == 1.0 and len(v.evidence_hash) == 64
    assert all(r.task_id == "t-base" and r.message for r in v.results)
    assert outcome(v, "prefix_partial").details["applicable"] is True
    assert outcome(v, "prohibited_zeroes").details["rules"][0]["score"] == 0.0
    assert outcome(v, "solvable_under_faults").details == {"applicable": False, "rate": 0.0}
    json.dumps(v.model_dump(mode="json"))  # JSON-able throughout
    assert validate_spec(TaskSpec.model_validate(spec())).model_dump() == v.model_dump()  # object or dict alike


# --- schema ------------------------------------------------------------------------------------------------


def test_schema_fails_with_error_locations():
    v = validate_spec(spec(surprise=1, difficulty=9))
    assert not v.valid and v.task_id == "t-base" and v.discrimination == 0.0
    [row] = v.results
    assert row.code == "schema" and not row.passed and row.severity == "mandatory"
    locs = [e["loc"] for e in row.details["errors"]]
    assert ["surprise"] in locs and ["difficulty"] in locs
    bad_step = spec(solution=[{"tool": "mail_search", "args": {}}])  # no final answer step
    assert outcome(validate_spec(bad_step), "schema").details["errors"][0]["msg"]


# --- references --------------------------------------------------------------------------------------------


def test_references_flags_every_missing_target():
    data = spec(
        checks=[
            *BASE["checks"],
            {"id": "ghost-mail", "kind": "mail_in_folder", "ids": ["m1", "m9"], "folder": "archive"},
            {"id": "ghost-file", "kind": "unchanged", "path": "nowhere/at/all.txt"},
            {
                "id": "ghost-sheet",
                "kind": "sheet_cell",
                "sheet": "budget",
                "match": {"item": "x"},
                "column": "amount",
                "equals": 1,
            },
            {
                "id": "ghost-ticket",
                "kind": "record",
                "service": "tickets",
                "collection": "tickets",
                "match": {"id": "t9"},
            },
            {"id": "ghost-tool", "kind": "tool_not_called", "tool": "mail_nuke"},
            {"id": "e404", "kind": "event_absent"},
        ],
        prohibited=[{"tool": "mail_shred"}, {"tool": "mail_send", "args": {"recipient": "*@evil.test"}}],
        tools=["mail_move", "mail_send", "mail_delete"],  # the oracle's mail_search is no longer allowed
    )
    row = outcome(validate_spec(data), "references")
    assert not row.passed
    refs = {(m["where"], str(m["ref"])) for m in row.details["missing"]}
    assert ("solution[0]", "mail_search") in refs
    assert ("checks[3]", "m9") in refs and ("checks[3]", "m1") not in refs
    assert ("checks[4]", "nowhere/at/all.txt") in refs
    assert ("checks[5]", "budget") in refs
    assert ("checks[6]", "{'id': 't9'}") in refs
    assert ("checks[7]", "mail_nuke") in refs
    assert ("checks[8]", "e404") in refs
    assert ("prohibited[0]", "mail_shred") in refs
    assert ("prohibited[1].args", "recipient") in refs


def test_references_accept_targets_the_oracle_creates():
    write = {"tool": "files_write", "args": {"path": "out/report.md", "content": "1250"}}
    data = spec(
        checks=[*BASE["checks"], {"id": "report", "kind": "file_exists", "path": "out/report.md"}],
        tools=[*BASE["tools"], "files_write"],
        solution=[*BASE["solution"][:-1], write, BASE["solution"][-1]],
    )
    assert outcome(validate_spec(data), "references").passed


# --- the gate ----------------------------------------------------------------------------------------------


def test_oracle_scores_1_fails_on_an_unreachable_check():
    unreachable = {"id": "sent", "kind": "mail_sent", "to": "accounting@acme.test", "body_contains": ["9,999"]}
    data = spec(checks=[BASE["checks"][0], unreachable, BASE["checks"][2]])
    v = validate_spec(data)
    row = outcome(v, "oracle_scores_1")
    assert not row.passed and not v.valid and row.details["failed_checks"][0]["id"] == "sent"


def test_a_blank_reveal_keyword_is_rejected_by_the_schema():
    # A reveal keyword "" would match every message, even the null agent's empty one, so that "doing nothing"
    # could earn points: the spec itself refuses it.
    data = spec(
        user={"facts": {"x": "y"}, "reveal": [{"when_any": [""], "say": "ok"}]},
        checks=[*BASE["checks"], {"id": "calendar-kept", "kind": "unchanged", "service": "calendar", "weight": 3}],
    )
    v = validate_spec(data)
    assert not v.valid and v.failed_codes == ["schema"]


def test_answer_only_fails_flags_checks_that_hold_without_work():
    heavy_guard = spec(
        checks=[*BASE["checks"], {"id": "calendar-kept", "kind": "unchanged", "service": "calendar", "weight": 20}]
    )
    v = validate_spec(heavy_guard)
    row = outcome(v, "answer_only_fails")
    assert not row.passed and not v.valid and "calendar-kept" in row.details["passing_checks"]
    assert outcome(validate_spec(spec()), "answer_only_fails").details["score"] == 0.2


def test_checks_discriminate_lists_checks_true_from_the_start_and_is_advisory():
    light = spec(
        checks=[
            *BASE["checks"],
            {"id": "lunch-stays", "kind": "mail_in_folder", "ids": ["m2"], "folder": "inbox", "weight": 0.2},
        ]
    )
    row = outcome(validate_spec(light), "checks_discriminate")
    assert row.passed and [h["id"] for h in row.details["holding"]] == ["lunch-stays"]  # a light guard is fine
    data = spec(
        checks=[
            *BASE["checks"],
            {"id": "lunch-stays", "kind": "mail_in_folder", "ids": ["m2"], "folder": "inbox", "weight": 2.5},
            {"id": "calendar-kept", "kind": "unchanged", "service": "calendar"},
            {"id": "no-delete", "kind": "tool_not_called", "tool": "mail_delete"},
        ]
    )
    v = validate_spec(data)
    row = outcome(v, "checks_discriminate")
    assert not row.passed and row.severity == "advisory"
    assert [h["id"] for h in row.details["holding"]] == ["lunch-stays"]
    assert v.valid and 0 < v.discrimination < 1


def test_prefix_partial():
    first_effect_does_it_all = spec(checks=BASE["checks"][:1] + BASE["checks"][2:])  # mail_send goes unchecked
    row = outcome(validate_spec(first_effect_does_it_all), "prefix_partial")
    assert not row.passed and row.details["completion"] == 1.0 and row.severity == "advisory"
    one_effect = spec(
        solution=[BASE["solution"][1], BASE["solution"][3]], checks=BASE["checks"][:1] + BASE["checks"][2:]
    )
    row = outcome(validate_spec(one_effect), "prefix_partial")
    assert row.passed and row.details == {"applicable": False, "effects": 1}


def test_prohibited_zeroes():
    v = validate_spec(
        spec(prohibited=[{"tool": "mail_delete"}, {"tool": "mail_send", "args": {"to": "*@external.test"}}])
    )
    row = outcome(v, "prohibited_zeroes")
    assert row.passed and [r["rule"] for r in row.details["rules"]] == [0, 1]
    assert row.details["rules"][1]["call"] == {"to": "x@external.test"}
    oracle_breaks_it = spec(prohibited=[{"tool": "mail_send", "args": {"to": "accounting@*"}}])
    v = validate_spec(oracle_breaks_it)
    row = outcome(v, "prohibited_zeroes")
    assert not row.passed and row.details["oracle_violates"] == [0] and not v.valid
    assert outcome(validate_spec(spec(prohibited=[])), "prohibited_zeroes").details["applicable"] is False


def test_deterministic_catches_a_replay_that_differs(monkeypatch):
    assert outcome(validate_spec(spec()), "deterministic").details["same_hash"] is True
    from coworkenv.validate.battery import consistency

    real = consistency.replay
    monkeypatch.setattr(consistency, "replay", lambda s, t: dataclasses.replace(real(s, t), answer="tampered"))
    row = outcome(validate_spec(spec()), "deterministic")
    assert not row.passed and row.details["same_hash"] is False


def test_solvable_under_faults():
    row = outcome(validate_spec(spec(faults={"rate": 0.4, "seed": 3})), "solvable_under_faults")
    assert row.passed and row.details["faults_injected"] > 0 and "note" not in row.details
    always_failing = spec(faults={"rate": 1.0, "seed": 3})
    v = validate_spec(always_failing)
    assert not outcome(v, "solvable_under_faults").passed and not v.valid
    toothless = outcome(validate_spec(spec(faults={"rate": 0.0001, "seed": 3})), "solvable_under_faults")
    assert toothless.passed and toothless.details["faults_injected"] == 0 and "advisory" in toothless.details["note"]


# --- leakage -----------------------------------------------------------------------------------------------


def test_numbers_are_found_in_any_rendering_but_not_inside_ids_dates_or_times():
    assert numbers_in("pay $1,250.50 or 1250 (12%) now.") == [1250.5, 1250.0, 12.0]
    assert numbers_in("INC-4471 on 2026-12-17 at 14:00 in q3.csv, v2") == []


@pytest.mark.parametrize(
    "instruction",
    [
        "Archive the Globex invoice (1,250 EUR) and send the amount to accounting@acme.test.",
        "Archive the Globex invoice of 1250.00 and send the amount to accounting@acme.test.",
    ],
)
def test_no_leakage_flags_the_expected_number(instruction):
    row = outcome(validate_spec(spec(instruction=instruction)), "no_leakage")
    assert not row.passed and row.details["leaks"][0]["check"] == "amount"
    assert row.details["leaks"][0]["found"] in instruction  # the text to repair, as written


def test_no_leakage_answer_text_rule():
    def leaked(instruction: str, option: str) -> list:
        checks = [*BASE["checks"], {"id": "said", "kind": "answer_contains", "any_of": [option]}]
        return leaks(TaskSpec.model_validate(spec(instruction=instruction, checks=checks)))

    assert leaked("Tell me the due date (2026-12-20) and archive it.", "2026-12-20")  # digits: information
    assert leaked("Ask billing@globex.test and archive it.", "billing@globex.test")  # an address
    assert leaked("Archive the invoice and tell me that you wrote to Amount due.", "Amount due")  # a workspace phrase
    assert not leaked("Move phishing mail to the 'phishing' folder and tell me.", "phishing")  # the task's own word
    assert not leaked("Archive it and tell me the amount.", "2026-12-20")


def test_no_leakage_flags_hidden_user_facts():
    user = {
        "facts": {
            "room": "Room Atlas",
            "when": "2026-12-17T14:00:00Z",
            "guests": ["ana@acme.test"],
            "n": 12,
            "huge": 10**400,
            "ok": True,
        },
        "reveal": [{"when_any": ["room"], "say": "Room Atlas"}],
    }
    clean = spec(user=user)
    assert outcome(validate_spec(clean), "no_leakage").passed
    for text, fact in [
        ("Book room atlas for the demo and archive the Globex invoice.", "room"),
        ("Book it for 17 December; archive the Globex invoice.", "when"),
        ("Invite ana@acme.test; archive the Globex invoice.", "guests[0]"),
        ("Book 12 seats; archive the Globex invoice.", "n"),
    ]:
        row = outcome(validate_spec(spec(user=user, instruction=text)), "no_leakage")
        assert not row.passed and [leak["fact"] for leak in row.details["leaks"]] == [fact], text


# --- capabilities ------------------------------------------------------------------------------------------


def _problems(data: dict) -> list[str]:
    row = outcome(validate_spec(data), "capabilities_consistent")
    return sorted({p["capability"] for p in row.details["problems"]})


def test_capabilities_consistent_failures():
    assert _problems(spec(capabilities=["multi_turn"])) == ["multi_turn"]
    row = outcome(
        validate_spec(spec(capabilities=["robustness"], solution=[{"say": "Which?"}, *BASE["solution"]])),
        "capabilities_consistent",
    )
    assert row.details["unsupported"] == ["robustness"] and row.details["missing"] == ["multi_turn"] and not row.passed
    assert _problems(spec(capabilities=["robustness"])) == ["robustness"]
    assert _problems(spec(capabilities=["safety"], prohibited=[])) == ["safety"]
    guarded = [*BASE["checks"], {"id": "nd", "kind": "tool_not_called", "tool": "mail_delete"}]
    assert _problems(spec(capabilities=["safety"], prohibited=[], checks=guarded)) == []
    assert _problems(spec(capabilities=["multi_step"])) == ["multi_step"]  # 2 effects, one service
    assert _problems(spec(capabilities=["scheduling"])) == ["scheduling"]
    assert _problems(spec(capabilities=["data_analysis"], checks=BASE["checks"][:2])) == ["data_analysis"]
    assert _problems(spec(capabilities=["data_analysis"])) == []  # answer_number
    says = spec(solution=[{"say": "Which invoice?"}, *BASE["solution"]])
    assert _problems(says) == ["multi_turn"]


def test_capabilities_consistent_multi_turn_example_passes():
    [example] = load_tasks(EXAMPLES / "08_multi_turn_vendor_demo.json")
    assert outcome(validate_spec(example), "capabilities_consistent").passed
    data = json.loads(example.to_json())
    data["checks"] = [c for c in data["checks"] if c["kind"] != "asked_user"]
    assert _problems(data) == ["multi_turn"]


# --- robustness of the battery itself ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "",
        "not json",
        "[1, 2]",
        "null",
        '"task"',
        "{}",
        '{"id": 5}',
        '{"id": "x", "checks": "nope"}',
        "[" * 100_000 + "]" * 100_000,
        '{"id": "big", "instruction": "' + "a" * 100 + '"' + "}" * 3,
        "1" * 10_000,
        '{"a": NaN}',
    ],
)
def test_garbage_never_raises(text):
    result = validate_spec_json(text)
    v = TaskValidation.model_validate(result)
    assert not v.valid and v.results[0].code == "schema" and not v.results[0].passed
    json.dumps(result)


def test_lone_surrogates_and_nan_in_free_form_fields_still_give_writable_results():
    data = spec(
        prohibited=[{"tool": "mail_delete", "args": {"\ud800x": float("nan")}}],
        user={"facts": {"a": "\udc80", "b": float("inf")}, "reveal": [{"when_any": ["x"], "say": "y"}]},
    )
    result = validate_spec_json(json.dumps(data))
    assert not result["valid"]
    json.dumps(result, ensure_ascii=False, allow_nan=False).encode("utf-8")  # valid UTF-8, no NaN
    assert validate_spec_json('{"id": "\\ud800"}')["task_id"] == "?"


def test_garbage_keeps_the_task_id_it_can_find():
    assert validate_spec_json('{"id": 5}')["task_id"] == "5"
    assert validate_spec_json('{"id": "abc", "family": 3}')["task_id"] == "abc"


def test_huge_input_is_rejected_without_parsing(monkeypatch):
    monkeypatch.setattr(battery.run, "MAX_SPEC_CHARS", 1000)
    v = validate_spec_json(json.dumps(spec(instruction="x" * 2000)))
    assert v["results"][0]["details"]["errors"][0]["type"] == "too_large"


def test_a_crashing_check_becomes_a_failed_outcome(monkeypatch):
    def boom(ctx):
        raise RuntimeError(
            "kaboom in /srv/build/site-packages/coworkenv/x.py with Authorization: Bearer tok-0123456789"
        )

    monkeypatch.setattr(battery.capabilities, "capability_problems", boom)
    v = TaskValidation.model_validate(validate_spec_json(json.dumps(spec())))
    row = outcome(v, "capabilities_consistent")
    assert not row.passed and row.details["exception"] == "RuntimeError" and "kaboom" in row.details["error"]
    # what the validations table stores: a short error, no traceback, no host path, no credential
    assert set(row.details) == {"exception", "error"}
    assert row.details["error"] == "kaboom in …/x.py with Authorization: [REDACTED]"
    assert "/srv/" not in row.message and "tok-0123456789" not in row.message
    assert not v.valid and all(r.passed for r in v.results if r.code != "capabilities_consistent")


def test_crashing_episodes_fail_the_checks_that_need_them(monkeypatch):
    def boom(*a, **k):
        raise RuntimeError("episode crashed")

    from coworkenv.validate.battery import context

    monkeypatch.setattr(context, "play", boom)
    monkeypatch.setattr(context, "play_null", boom)
    v = validate_spec(spec())
    failed = {r.code for r in v.failures}
    assert {"oracle_scores_1", "empty_scores_0", "deterministic"} <= failed
    assert outcome(v, "schema").passed and outcome(v, "no_leakage").passed and v.evidence_hash == ""


# --- the real tasks ----------------------------------------------------------------------------------------


def test_examples_are_valid():
    for example in load_tasks(EXAMPLES):
        v = validate_spec(example)
        assert v.valid, (example.id, [(r.code, r.message) for r in v.failures if r.severity == "mandatory"])


def test_every_family_at_every_difficulty_is_valid():
    problems = {}
    for name, fam in load_families().items():
        for difficulty in range(1, 6):
            for seed in (0, 1):
                v = validate_spec(build_task(fam, seed, difficulty))
                if not v.valid:
                    problems.setdefault((name, difficulty), set()).update(v.failed_codes)
    assert len(load_families()) == 25
    assert not problems, problems
