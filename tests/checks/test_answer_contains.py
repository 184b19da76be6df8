"""`answer_contains`: passing and failing evidence; its `recompute` and `leaks` hooks and `answer` flag through the
registry."""

from __future__ import annotations

import pytest

from coworkenv.checks import CHECKS, DROP
from tests.support.builders import check
from tests.support.checks import (
    Row,
    assert_pass_fail,
    cases,
    episode,
    holds,
    leaked,
    recompute,
    registered,
    with_answer,
)

ROWS: list[Row] = [
    (
        "answer_contains",
        {"kind": "answer_contains", "text": "Archived"},
        with_answer("I ARCHIVED it"),
        with_answer("Done."),
    ),
    (
        "answer_contains-any_of",
        {"kind": "answer_contains", "any_of": ["north", "n. region"]},
        with_answer("The North region"),
        with_answer("south"),
    ),
    (
        "answer_contains-whole_word",
        {"kind": "answer_contains", "text": "Paris", "whole_word": True},
        with_answer("Go to Paris."),
        with_answer("Parisian food"),
    ),
    (
        "answer_contains-not_negated",
        {"kind": "answer_contains", "text": "Paris", "not_negated": True},
        with_answer("Lyon is not an option, pick Paris"),
        with_answer("We should not choose Paris."),
    ),
    (
        "answer_contains-scope-messages",
        {"kind": "answer_contains", "text": "INC-7", "scope": "messages"},
        with_answer("Done.", says=("Is it INC-7?",)),
        with_answer("Done.", says=("Which one?",)),
    ),
]

WORKSPACE = "Travel policy\nEconomy class for flights under 6 hours."


def option(text: str) -> dict:
    return {"kind": "answer_contains", "text": text}


@pytest.mark.parametrize(("fields", "passing", "failing"), cases(ROWS))
def test_evaluate(fields, passing, failing):
    assert_pass_fail(fields, passing, failing)


def test_registry_entry():
    # reads only the answer: holding on an untouched run says nothing about the workspace
    assert registered("answer_contains") == {
        "hooks": {"recompute", "leaks"},
        "guard": False,
        "answer": True,
        "evidence_for": set(),
    }


def test_recompute_keeps_the_options_the_oracle_mentions():
    ev = episode(answer="North and EAST grew.")
    fixed = recompute({"kind": "answer_contains", "any_of": ["north", "south", "east"]}, ev)
    assert fixed == {"id": "chk-answer_contains", "kind": "answer_contains", "any_of": ["north", "east"]} and holds(
        fixed, ev
    )


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
    assert found == [
        {"source": "answer_contains", "check": "chk-answer_contains", "value": "Q3 north", "found": "Q3 North"}
    ]


@pytest.mark.parametrize(
    ("fields", "answer", "passed"),
    [
        (option("Paris"), "Parisian food", True),  # by default a substring counts, as it always did
        (option("Paris"), "We should not choose Paris", True),  # and a negated one too
        ({**option("Paris"), "whole_word": True}, "We should not choose Paris", True),
        ({**option("Paris"), "not_negated": True}, "Parisian food", True),  # not_negated alone keeps substrings
        ({**option("Paris"), "not_negated": True}, "Paris is not an option; Lyon is.", False),
        ({**option("Paris"), "not_negated": True}, "Not Lyon but Paris.", True),
        (
            {**option("Paris"), "not_negated": True},
            "Paris isn't cheap, but Paris wins.",
            True,
        ),  # a later occurrence counts
        ({**option("Paris"), "not_negated": True, "whole_word": True}, "Avoid Paris; Parisian hotels are full.", False),
    ],
)
def test_whole_word_and_not_negated(fields, answer, passed):
    assert holds(fields, episode(answer=answer)) is passed


def test_scope_answer_reads_only_the_final_answer():
    ev = episode(answer="Done.", says=("Shall I pick Paris?",))
    assert not holds(option("Paris"), ev) and holds({**option("Paris"), "scope": "messages"}, ev)


def test_recompute_counts_a_mention_as_the_check_does():
    ev = episode(answer="Not Lyon: Paris.")
    fields = {"kind": "answer_contains", "any_of": ["Lyon", "Paris"], "not_negated": True}
    assert recompute(fields, ev) == {"id": "chk-answer_contains", **fields, "any_of": ["Paris"]}
