"""`answer_regex`: passing and failing evidence, the RE2-only pattern, its `recompute` and `leaks` hooks."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from coworkenv.checks import DROP
from tests.support.builders import check
from tests.support.checks import Row, assert_pass_fail, cases, episode, leaked, recompute, registered, with_answer

ROWS: list[Row] = [
    (
        "answer_regex",
        {"kind": "answer_regex", "pattern": r"\bINC-\d{4}\b"},
        with_answer("Escalated inc-4471."),
        with_answer("Escalated INC-44."),
    ),
    (
        "answer_regex-case_sensitive",
        {"kind": "answer_regex", "pattern": r"\bINC-\d+", "case_sensitive": True},
        with_answer("INC-7 done"),
        with_answer("inc-7 done"),
    ),
    (
        "answer_regex-scope-messages",
        {"kind": "answer_regex", "pattern": r"\d+ rooms", "scope": "messages"},
        with_answer("Booked.", says=("Need 3 rooms?",)),
        with_answer("Booked.", says=("Rooms?",)),
    ),
]


def regex(pattern: str, **fields) -> dict:
    return {"kind": "answer_regex", "pattern": pattern, **fields}


@pytest.mark.parametrize(("fields", "passing", "failing"), cases(ROWS))
def test_evaluate(fields, passing, failing):
    assert_pass_fail(fields, passing, failing)


def test_registry_entry():
    assert registered("answer_regex") == {
        "hooks": {"recompute", "leaks"},
        "guard": False,
        "answer": True,
        "evidence_for": set(),
    }


@pytest.mark.parametrize("pattern", [r"(a)\1", r"(?=x)y", "("], ids=["backreference", "lookahead", "unbalanced"])
def test_a_pattern_re2_cannot_run_is_refused(pattern):
    with pytest.raises(ValidationError, match="regex_unsupported|not supported by the linear-time engine"):
        check(**regex(pattern))


def test_recompute_drops_a_pattern_the_oracle_does_not_match():
    assert recompute(regex("x+"), episode(answer="nothing")) is DROP


@pytest.mark.parametrize(
    ("pattern", "instruction", "workspace", "found"),
    [
        (r"INC-\d+", "Close INC-4471 and tell me its id.", "", ["INC-4471"]),  # digits carry information
        (r"\w+@acme\.test", "Ask ana@acme.test.", "", ["ana@acme.test"]),
        (
            r"(?i)travel policy",
            "Summarize the travel policy.",
            "travel policy\nEconomy",
            ["travel policy"],
        ),  # a workspace phrase
        (r"(?i)summary", "Write a summary.", "", []),  # one word: the task's own vocabulary
        (r"INC-\d+", "Close the VPN ticket.", "", []),
        (r"x*", "Anything at all.", "", []),  # an empty match gives nothing away
    ],
)
def test_leaks(pattern, instruction, workspace, found):
    assert leaked(regex(pattern), instruction, workspace) == found
