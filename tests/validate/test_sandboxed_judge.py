"""Rubric verdicts cross into the sandbox (docs/design/contracts.md, "Judge"): the parent asks the judge for every pair the
battery will need, ships the verdicts as a table, and the sandboxed battery grades rubrics from it; a pair the parent
did not foresee comes back as missed and the task runs once more with its verdict. The judge is never reached from
inside the sandbox (bubblewrap has no network)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from coworkenv.judge.endpoint import JudgeLike, Verdict, using_judge
from coworkenv.judge.table import NO_VERDICT, TableJudge, TableRow, ask_all
from coworkenv.validate import batch
from coworkenv.validate.batch import validate_tasks
from coworkenv.validate.battery import validate_spec
from coworkenv.validate.judging import spec_pairs
from tests.support import ROOT
from tests.support.judge_endpoint import judging
from tests.support.sandbox import RUNTIME_NAMES, usable_runtime
from tests.validate.test_battery import BASE, outcome, spec
from tests.validate.test_calibration import CRITERIA, GOOD, STUFFED

MESSAGES = {
    "id": "told",
    "kind": "rubric",
    "scope": "messages",
    "criteria": 'The messages ask "what date" and name "Room Atlas".',
    "adversarial": ["Booked the demo in Room Atlas."],
}
MULTI_TURN = json.loads((ROOT / "examples" / "tasks" / "08_multi_turn_vendor_demo.json").read_text())
"""Two `say` steps the scripted user answers, then tool calls and the answer: the prefix `prefix_partial` plays keeps
both messages."""


def messages_spec(rubric: dict[str, Any] = MESSAGES) -> dict[str, Any]:
    return {**MULTI_TURN, "checks": [*MULTI_TURN["checks"], rubric]}


def rubric_spec(*rubrics: dict[str, Any], **changes: Any) -> dict[str, Any]:
    return spec(checks=[*BASE["checks"], *rubrics], **changes)


def grouped(*checks: dict[str, Any]) -> dict[str, Any]:
    return {"id": "group", "kind": "all_of", "checks": list(checks)}


class Recording:
    """The real judge, remembering what it was asked."""

    def __init__(self, judge: JudgeLike):
        self.judge, self.asked = judge, []

    def verdict(self, criteria: str, text: str) -> Verdict:
        self.asked.append((criteria, text))
        return self.judge.verdict(criteria, text)


@pytest.fixture
def judge(tmp_path):
    with judging(tmp_path / "verdicts") as (server, real):
        yield server, real


@pytest.fixture(params=RUNTIME_NAMES)
def runtime(request: pytest.FixtureRequest) -> str:
    return usable_runtime(request.param).name


def _sandboxed(*specs: dict[str, Any], runtime: str) -> list[Any]:
    return validate_tasks([json.dumps(s) for s in specs], workers=1, runtime=runtime, budget_s=30)


@pytest.mark.parametrize(
    "data",
    [
        rubric_spec(GOOD),
        messages_spec(),
        messages_spec(grouped({**GOOD, "id": "inner"}, {**MESSAGES, "id": "inner2"})),
    ],
    ids=["answer", "messages", "nested"],
)
def test_the_parent_foresees_every_pair_the_battery_asks_about(judge, data: dict[str, Any]):
    _, real = judge
    recording = Recording(real)
    with using_judge(recording):
        validate_spec(data)
    assert recording.asked and set(recording.asked) <= set(spec_pairs(json.dumps(data)))


def test_no_pairs_for_tasks_without_rubrics_or_that_are_no_spec():
    assert spec_pairs(json.dumps(BASE)) == [] and spec_pairs("not json") == [] and spec_pairs("[1, 2]") == []
    only_empty = rubric_spec({**GOOD, "adversarial": ["  "]}, solution=[*BASE["solution"][:-1], {"answer": ""}])
    assert spec_pairs(json.dumps(only_empty)) == [(CRITERIA, "Done.")]  # an empty text is never sent to the judge


def test_a_table_judge_answers_from_its_table_and_remembers_what_it_lacks():
    table = TableJudge([TableRow(criteria="c", text="t", passed=True, reason="fine")])
    assert table.verdict("c", "t") == Verdict(passed=True, reason="fine", cached=True)
    assert table.verdict("c", "other") == Verdict(passed=None, reason=NO_VERDICT)
    assert list(table.missed) == [("c", "other")]


def test_ask_all_asks_each_distinct_pair_once(judge):
    server, real = judge
    rows = ask_all(real, [(CRITERIA, "1,250 EUR archived"), (CRITERIA, "nothing"), (CRITERIA, "1,250 EUR archived")])
    assert [(r.text, r.passed) for r in rows] == [
        ("1,250 EUR archived", True),
        ("nothing", False),
    ] and server.requests == 2


def test_a_rubric_task_validates_in_the_sandbox_and_re_validating_asks_nothing_new(judge, runtime: str):
    server, _ = judge
    good, messages = rubric_spec(GOOD), messages_spec()
    validations = _sandboxed(good, messages, runtime=runtime)
    assert [v.valid for v in validations] == [True, True], [
        (r.code, r.message) for v in validations for r in v.failures
    ]
    assert (
        outcome(validations[0], "judge_calibration").details
        == outcome(validate_spec(good), "judge_calibration").details
    )
    sent = [(b["messages"][-1]["content"]) for b in server.bodies]
    assert (
        server.requests == len(set(sent)) == len(set(spec_pairs(json.dumps(good)) + spec_pairs(json.dumps(messages))))
    )  # each pair once
    asked = server.requests
    assert [v.valid for v in _sandboxed(good, messages, runtime=runtime)] == [True, True] and server.requests == asked


def test_a_miscalibrated_rubric_is_rejected_in_the_sandbox(judge, runtime: str):
    (v,) = _sandboxed(rubric_spec({**GOOD, "adversarial": [*GOOD["adversarial"], STUFFED]}), runtime=runtime)
    row = outcome(v, "judge_calibration")
    assert not v.valid and v.failed_codes == ["judge_calibration"]
    assert [a["passed"] for a in row.details["rubrics"][0]["adversarial"]] == [False, False, True]


def test_a_pair_the_parent_did_not_foresee_is_asked_for_and_the_task_run_again(judge, runtime: str, monkeypatch):
    server, _ = judge
    monkeypatch.setattr(batch, "spec_pairs", lambda text: [])
    (v,) = _sandboxed(rubric_spec(GOOD), runtime=runtime)
    assert v.valid, [(r.code, r.message) for r in v.failures]
    assert server.requests == len(spec_pairs(json.dumps(rubric_spec(GOOD))))  # what the battery missed, each once


def test_without_a_judge_the_sandboxed_battery_says_not_graded(runtime: str):
    with using_judge(None):
        (v,) = _sandboxed(rubric_spec(GOOD), runtime=runtime)
    row = outcome(v, "judge_calibration")
    assert not v.valid and row.details["ungraded"] == ["summary"] and row.message.startswith("not graded: summary;")
