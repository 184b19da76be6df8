"""`no_leakage` details: how a hidden date is rendered, where a nested fact is named, what counts as workspace text."""

from __future__ import annotations

from coworkenv.spec.task import TaskSpec
from coworkenv.validate.battery import leaks
from coworkenv.validate.battery.leakage import _date_renderings
from tests.validate.test_battery import BASE, spec


def test_iso_dates_are_looked_for_as_people_write_them():
    assert _date_renderings("2026-12-03") == ["2026-12-03", "3 December", "December 3", "3 Dec", "Dec 3"]
    assert _date_renderings(" 2027-02-14T09:30:00Z ") == ["2027-02-14", "14 February", "February 14", "14 Feb", "Feb 14"]
    assert _date_renderings("2026-02-30") == [] and _date_renderings("next Tuesday") == []


def test_a_nested_fact_is_named_by_its_path():
    data = spec(
        capabilities=["communication", "multi_turn"],
        instruction="Book the Lyon trip for 4 days and archive the Globex invoice.",
        user={"facts": {"trip": {"city": "Lyon", "days": [3, 4], "when": "2026-12-03"}}, "reveal": [{"when_any": ["trip"], "say": "Lyon"}]},
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
