"""`no_leakage` details: how a hidden date is rendered, where a nested fact is named, what counts as workspace text."""

from __future__ import annotations

from coworkenv.spec.task import TaskSpec
from coworkenv.validate.battery import leaks
from coworkenv.validate.battery.leakage import _date_renderings
from tests.validate.test_battery import BASE, spec


def test_iso_dates_are_looked_for_as_people_write_them():
    assert _date_renderings("2026-12-03") == ["2026-12-03", "3 December", "December 3", "3 Dec", "Dec 3"]
    assert _date_renderings(" 2027-02-14T09:30:00Z ") == [
        "2027-02-14",
        "14 February",
        "February 14",
        "14 Feb",
        "Feb 14",
    ]
    assert _date_renderings("2026-02-30") == [] and _date_renderings("next Tuesday") == []


def test_a_nested_fact_is_named_by_its_path():
    data = spec(
        capabilities=["communication", "multi_turn"],
        instruction="Book the Lyon trip for 4 days and archive the Globex invoice.",
        user={
            "facts": {"trip": {"city": "Lyon", "days": [3, 4], "when": "2026-12-03"}},
            "reveal": [{"when_any": ["trip"], "say": "Lyon"}],
        },
    )
    found = leaks(TaskSpec.model_validate(data))
    assert [(f["fact"], f["value"]) for f in found] == [("trip.city", "Lyon"), ("trip.days[1]", 4)]


def test_a_two_word_answer_leaks_when_the_workspace_names_it_even_as_a_key():
    sheets = {"travel budget": {"columns": ["item", "amount"], "rows": [["laptops", 4000]]}}
    checks = [*BASE["checks"], {"id": "which", "kind": "answer_contains", "text": "travel budget"}]
    instruction = "Archive the Globex invoice; it belongs to the travel budget."
    data = spec(instruction=instruction, workspace={"mail": BASE["workspace"]["mail"], "sheets": sheets}, checks=checks)
    assert [(f["check"], f["value"]) for f in leaks(TaskSpec.model_validate(data))] == [("which", "travel budget")]
    data["workspace"]["sheets"] = {"costs": sheets["travel budget"]}  # the phrase is the instruction's own words now
    assert leaks(TaskSpec.model_validate(data)) == []


def _facts_spec(instruction: str, facts: dict) -> TaskSpec:
    return TaskSpec.model_validate(
        spec(
            capabilities=["communication", "multi_turn"],
            instruction=instruction,
            user={"facts": facts, "reveal": [{"when_any": ["x"], "say": "y"}]},
        )
    )


def test_which_facts_leak_word_for_word():
    instruction = (
        "Ask HR in Lyon whether it is true that none of the 1 budget is 1250 and the limit is 3; a code is not 1251."
    )
    facts = {
        "none": None,
        "vip": True,
        "team": "HR",
        "budget": "€1,250",
        "limit": 3,
        "code": 1252,
        "letter": "a",
        "trip": [None, False, 10**400, "Lyon"],
    }
    assert (
        leaks(_facts_spec(instruction, facts))
        == [
            {"source": "answer_number", "check": "amount", "value": 1250.0, "found": "1250"},  # BASE's own answer check
            {"source": "user.facts", "fact": "team", "value": "HR", "found": "HR"},
            {"source": "user.facts", "fact": "budget", "value": "€1,250", "found": "1250"},
            {"source": "user.facts", "fact": "limit", "value": 3, "found": "3"},
            {"source": "user.facts", "fact": "trip[3]", "value": "Lyon", "found": "Lyon"},
        ]
    )  # None and booleans are skipped (not "none", not 1), 1252 is not 1251, one letter is too short, 10**400 is no float


def test_every_answer_check_that_leaks_is_listed():
    checks = [{"id": "n1", "kind": "answer_number", "value": 1250}, {"id": "n2", "kind": "answer_number", "value": 7}]
    data = spec(instruction="Archive invoice 7 of 1250 EUR.", checks=[*BASE["checks"][:2], *checks])
    assert [(f["source"], f["check"]) for f in leaks(TaskSpec.model_validate(data))] == [
        ("answer_number", "n1"),
        ("answer_number", "n2"),
    ]
