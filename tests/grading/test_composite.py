"""Composite scoring (docs/design/contracts.md, "Scoring"): group checks count with their own weight, `requires` gates a
check's credit on other checks passing, and a check that is not graded counts as failed and is listed."""

from __future__ import annotations

import pytest

from coworkenv.grading import consistency_gate, grade
from tests.support.builders import evidence, make_spec, ok
from tests.support.groups import NO_JUDGE, not_graded

READ = {"id": "read", "kind": "tool_called", "tool": "docs_read", "weight": 1.0}
SUMMARY = {"id": "summary", "kind": "answer_contains", "text": "economy", "weight": 3.0, "requires": ["read"]}
ANSWER = "Economy class for flights under 6 hours."


def graded(checks: list[dict], calls: tuple = (), answer: str = ANSWER):
    spec = make_spec(checks=checks)
    return grade(spec, evidence(spec, calls=list(calls), answer=answer))


def by_id(g) -> dict:
    return {c.id: c for c in g.checks}


def test_requires_is_a_gate_multiplier():
    unread = graded([READ, SUMMARY])
    assert unread.completion == 0.0 and unread.score == pytest.approx(0.2)
    summary = by_id(unread)["summary"]
    assert not summary.passed and summary.graded
    assert summary.reason == "answer mentions 'economy'; no credit: required check(s) read did not pass"
    read = graded([READ, SUMMARY], calls=(ok(0, "docs_read"),))
    assert read.completion == 1.0 and read.score == 1.0
    # without `requires` the summary alone earns 3/4
    assert graded([READ, {**SUMMARY, "requires": []}]).completion == pytest.approx(0.75)


def test_requires_chains_and_a_failing_check_keeps_its_own_reason():
    chain = [
        READ,
        {**SUMMARY, "weight": 1.0},
        {"id": "sent", "kind": "answer_contains", "text": "hours", "requires": ["summary"]},
    ]
    g = graded(chain)
    assert [c.passed for c in g.checks] == [False, False, False]
    assert by_id(graded([READ, SUMMARY], answer="no idea"))["summary"].reason == (
        "answer lacks ['economy']; no credit: required check(s) read did not pass"
    )
    assert graded(chain, calls=(ok(0, "docs_read"),)).completion == 1.0


def test_a_group_counts_with_its_own_weight():
    members = [
        {"id": f"said-{w}", "kind": "answer_contains", "text": w, "weight": 100.0}
        for w in ("economy", "hours", "business")
    ]
    two_of_three = {"id": "two", "kind": "at_least", "k": 2, "weight": 3.0, "checks": members}
    g = graded([READ, two_of_three])
    assert by_id(g)["two"].passed and g.completion == pytest.approx(0.75)  # 3 / (1 + 3): members' weights ignored
    assert not by_id(graded([READ, {**two_of_three, "k": 3}]))["two"].passed


def test_nested_groups():
    inner = {
        "id": "either",
        "kind": "any_of",
        "checks": [
            {"id": "biz", "kind": "answer_contains", "text": "business"},
            {"id": "hrs", "kind": "answer_contains", "text": "hours"},
        ],
    }
    outer = {
        "id": "all",
        "kind": "all_of",
        "weight": 2.0,
        "checks": [{"id": "eco", "kind": "answer_contains", "text": "economy"}, inner],
    }
    assert graded([READ, outer], calls=(ok(0, "docs_read"),)).completion == 1.0
    g = graded([READ, outer], calls=(ok(0, "docs_read"),), answer="Economy only.")
    assert g.completion == pytest.approx(1 / 3) and "either: none of 2 holds" in by_id(g)["all"].reason


def test_not_graded_counts_as_failed_and_is_listed(monkeypatch):
    rubric = {"id": "tone", "kind": "answer_number", "value": 6, "weight": 2.0}
    with not_graded(monkeypatch, "answer_number"):
        g = graded(
            [
                READ,
                {**SUMMARY, "weight": 1.0},
                rubric,
                {"id": "after", "kind": "answer_contains", "text": "hours", "requires": ["tone"]},
            ],
            calls=(ok(0, "docs_read"),),
        )
    results = by_id(g)
    assert g.ungraded == ["tone", "after"]  # `after` would pass, but what it requires was not graded
    assert (results["tone"].passed, results["tone"].graded, results["tone"].reason) == (False, False, NO_JUDGE)
    assert (results["after"].passed, results["after"].graded) == (False, False)
    assert g.completion == pytest.approx(2 / 5)  # never silently passed: its weight stays in the denominator


def test_a_group_with_a_member_not_graded(monkeypatch):
    number = {"id": "n", "kind": "answer_number", "value": 6}
    with not_graded(monkeypatch, "answer_number"):
        decided = graded(
            [
                READ,
                {
                    "id": "any",
                    "kind": "any_of",
                    "checks": [{"id": "eco", "kind": "answer_contains", "text": "economy"}, number],
                },
            ]
        )
        undecided = graded(
            [
                READ,
                {
                    "id": "all",
                    "kind": "all_of",
                    "checks": [{"id": "eco", "kind": "answer_contains", "text": "economy"}, number],
                },
            ]
        )
    assert by_id(decided)["any"].passed and decided.ungraded == []
    assert undecided.ungraded == ["all"] and by_id(undecided)["all"].reason == f"not graded: n: {NO_JUDGE}"


def test_the_consistency_gate_names_checks_not_graded(monkeypatch):
    checks = [
        {"id": "archived", "kind": "mail_in_folder", "ids": ["m1"], "folder": "archive"},
        {"id": "figure", "kind": "answer_number", "value": 7},
    ]
    spec = make_spec(
        checks=checks,
        solution=[{"tool": "mail_move", "args": {"id": "m1", "folder": "archive"}}, {"answer": "Invoice 7 archived."}],
    )
    assert consistency_gate(spec).passed
    with not_graded(monkeypatch, "answer_number"):
        verdict = consistency_gate(spec)
    assert not verdict.passed
    assert verdict.failures == ["oracle scores 0.6, not 1.0: not graded: figure (no judge configured)"]
