"""`answer_number`: passing and failing evidence; its `recompute` and `leaks` hooks and flags through the registry."""

from __future__ import annotations

import pytest

from coworkenv.checks import CHECKS, evaluate
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
        "answer_number",
        {"kind": "answer_number", "value": 1234.5},
        with_answer("Total: 1,234.50 EUR"),
        with_answer("Total: 1,234 EUR"),
    ),
    (
        "answer_number-tol",
        {"kind": "answer_number", "value": 100, "tol": 0.5},
        with_answer("about 100.4"),
        with_answer("about 100.6"),
    ),
    ("answer_number-none", {"kind": "answer_number", "value": 0}, with_answer("0 items"), with_answer("no number")),
    (
        "answer_number-any",
        {"kind": "answer_number", "value": 3, "match": "any"},
        with_answer("10, of which 3"),
        with_answer("10, of which 4"),
    ),
    (
        "answer_number-label",
        {"kind": "answer_number", "value": 1234, "label": "total"},
        with_answer("Tax: 90. Total: $1,234"),
        with_answer("Total: 90, tax 1,234"),
    ),
    (
        "answer_number-scope-messages",
        {"kind": "answer_number", "value": 7, "scope": "messages"},
        with_answer("Done.", says=("7 rooms free?",)),
        with_answer("Done.", says=("rooms free?",)),
    ),
]


def number(value: float, **fields) -> dict:
    return {"kind": "answer_number", "value": value, **fields}


@pytest.mark.parametrize(("fields", "passing", "failing"), cases(ROWS))
def test_evaluate(fields, passing, failing):
    assert_pass_fail(fields, passing, failing)


def test_answer_number_uses_the_first_number_only():
    ch = check(kind="answer_number", value=3)
    assert evaluate(ch, with_answer("3 of 10")())[0] is True
    assert evaluate(ch, with_answer("10, of which 3")())[0] is False


def test_registry_entry():
    assert registered("answer_number") == {
        "hooks": {"recompute", "leaks"},
        "guard": False,
        "answer": True,
        "evidence_for": {"data_analysis"},
    }


@pytest.mark.parametrize(
    ("answer", "value"),
    [("Total: 1,234.50 EUR", 1234.5), ("42 tickets, 3 of them open", 42), ("-7.5 degrees", -7.5)],
)
def test_recompute_takes_the_oracle_answers_first_number(answer, value):
    ev = episode(answer=answer)
    fixed = recompute(number(1, tol=0.01), ev)
    assert fixed == {"id": "chk-answer_number", **number(value, tol=0.01)} and holds(fixed, ev)
    assert type(fixed["value"]) is type(value)  # a whole number stays an int


@pytest.mark.parametrize(
    "answer",
    ["No figure at all.", "On 2026-12-01 we sold 42.", "INV-2291 comes to 40 EUR.", "At 14:00, 3 people."],
    ids=["none", "date-first", "identifier-first", "time-first"],
)
def test_recompute_gives_up_unless_a_figure_comes_first(answer):
    assert recompute(number(1), episode(answer=answer)) is None


@pytest.mark.parametrize(
    ("fields", "instruction", "found"),
    [
        (number(1234.5), "Check the invoice of 1,234.50 EUR.", ["1,234.50"]),
        (number(1250), "The invoice is $1250.00, right?", ["1250.00"]),
        (number(100, tol=0.5), "It was about 100.4 last time.", ["100.4"]),
        (number(100, tol=0.5), "It was about 100.6 last time.", []),
        (number(2026), "Answer by 2026-12-20.", []),  # inside a date
        (number(4471), "See INC-4471.", []),  # inside an identifier
        (number(14), "Meet at 14:00.", []),  # inside a time
        (number(3), "See q3.csv and v3.", []),
    ],
)
def test_leaks(fields, instruction, found):
    assert leaked(fields, instruction) == found


def test_a_leak_names_its_check_and_value():
    found = CHECKS.get("answer_number").leaks(check(**number(12)), "There are 12 of them.", lambda: "")
    assert found == [{"source": "answer_number", "check": "chk-answer_number", "value": 12.0, "found": "12"}]


@pytest.mark.parametrize(
    ("fields", "answer", "passed"),
    [
        (number(1234, label="total"), "Total: $1,234", True),
        (number(1234, label="total revenue"), "The total revenue for the quarter was 1234.", True),
        (number(1234, label="total"), "Subtotal: 1,234. Total: 1,500", False),  # a whole-word label: not "Subtotal"
        (number(1234, label="total"), "The total, as you asked, is 1,500; the tax is 1,234.", False),
        (number(1234, label="total"), "Total. Tax was 1,234", False),  # the number is in another clause
        (number(1234, label="total"), "Total for all the many regions we ever had: 1234", False),  # too far
        (number(1234, label="total"), "Total (Q3): 1,234", True),  # not the 3 of an identifier
        (number(1234, label="total", match="any"), "Total: 1,500 before and total: 1,234 after credits", True),
        (number(1234, label="total"), "Total: 1,500 before and total: 1,234 after credits", False),
        (number(3, match="any"), "INV-3 is due", False),  # `any` reads only numbers standing on their own
    ],
)
def test_match_and_label(fields, answer, passed):
    assert holds(fields, episode(answer=answer)) is passed


def test_recompute_takes_the_number_after_the_label():
    ev = episode(answer="Tax 90, total: 1,250.50 EUR")
    assert recompute(number(1, label="total"), ev) == {"id": "chk-answer_number", **number(1250.5, label="total")}
    assert recompute(number(1, label="grand total"), ev) is None


@pytest.mark.parametrize(
    ("answer", "value", "holds"),
    [
        # one amount, however it is written: a scale word always counts, an abbreviation on money only
        ("Globex paid $3.25 billion.", 3.25e9, True),
        ("Globex paid $3.25B.", 3.25e9, True),
        ("Globex paid 3,250,000,000 dollars.", 3.25e9, True),
        ("Globex paid 3.25 Billion dollars.", 3.25e9, True),
        ("The budget is €40k.", 40_000, True),
        ("Globex paid $3.25 million.", 3.25e9, False),
        ("Globex paid $3.25.", 3.25e9, False),
        ("We laid 5m of cable.", 5e6, False),  # no currency: metres, not millions
    ],
)
def test_an_amount_is_read_with_its_scale(answer, value, holds):
    for match in ("first", "any"):
        fields = {"kind": "answer_number", "value": value, "match": match}
        assert evaluate(check(**fields), episode(answer=answer))[0] is holds, (match, answer)
    labelled = {"kind": "answer_number", "value": value, "label": "paid"}
    if "paid" in answer:
        assert evaluate(check(**labelled), episode(answer=answer))[0] is holds, answer
