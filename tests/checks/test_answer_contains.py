"""`answer_contains`: passing and failing evidence; its `recompute` and `leaks` hooks and `answer` flag through the
registry."""

from __future__ import annotations

import pytest

from coworkenv.checks import CHECKS, DROP
from tests.support.builders import check
from tests.support.checks import Row, assert_pass_fail, cases, episode, holds, leaked, recompute, registered, with_answer

ROWS: list[Row] = [
    ("answer_contains", {"kind": "answer_contains", "text": "Archived"}, with_answer("I ARCHIVED it"), with_answer("Done.")),
    ("answer_contains-any_of", {"kind": "answer_contains", "any_of": ["north", "n. region"]}, with_answer("The North region"),
     with_answer("south")),
]  # fmt: skip

WORKSPACE = "Travel policy\nEconomy class for flights under 6 hours."


def option(text: str) -> dict:
    return {"kind": "answer_contains", "text": text}


@pytest.mark.parametrize(("fields", "passing", "failing"), cases(ROWS))
def test_evaluate(fields, passing, failing):
    assert_pass_fail(fields, passing, failing)


def test_registry_entry():
    # reads only the answer: holding on an untouched run says nothing about the workspace
    assert registered("answer_contains") == {"hooks": {"recompute", "leaks"}, "guard": False, "answer": True, "evidence_for": set()}


def test_recompute_keeps_the_options_the_oracle_mentions():
    ev = episode(answer="North and EAST grew.")
    fixed = recompute({"kind": "answer_contains", "any_of": ["north", "south", "east"]}, ev)
    assert fixed == {"id": "chk-answer_contains", "kind": "answer_contains", "any_of": ["north", "east"]} and holds(fixed, ev)


@pytest.mark.parametrize(
    "fields",
    [option("north"), {"kind": "answer_contains", "any_of": ["south", "west"]}],
    ids=["single-text", "no-option-mentioned"],
)
def test_recompute_drops_what_the_oracle_does_not_say(fields):
    assert recompute(fields, episode(answer="North and EAST grew.")) is DROP


@pytest.mark.parametrize(
    ("text", "instruction", "found"),
    [
        ("2026-12-20", "Tell me the due date (2026-12-20) and archive it.", ["2026-12-20"]),  # digits carry information
        ("billing@globex.test", "Ask BILLING@globex.test about it.", ["BILLING@globex.test"]),  # so does an address
        ("Economy  class", "Say whether economy\nclass applies.", ["economy\nclass"]),  # a phrase from the workspace
        ("business class", "Say whether business class applies.", []),  # a phrase the workspace does not have
        ("phishing", "Move phishing mail to the 'phishing' folder.", []),  # a single word: the task's own vocabulary
        ("7b", "Pay invoice 7b.", []),  # too short to look for
        ("1250", "Pay invoice 12500.", []),  # whole words only
        ("1250", "Archive it and tell me the amount.", []),
    ],
)
def test_leaks(text, instruction, found):
    assert leaked(option(text), instruction, WORKSPACE) == found


def test_a_leak_names_its_check_and_option():
    fields = {"kind": "answer_contains", "any_of": ["north", "Q3 north"]}
    found = CHECKS.get("answer_contains").leaks(check(**fields), "Compare the Q3 North figures.", lambda: "")
    assert found == [{"source": "answer_contains", "check": "chk-answer_contains", "value": "Q3 north", "found": "Q3 North"}]
