"""Rubrics graded in the sandboxed rollout jobs (docs/design/contracts.md, "Judge"): the oracle rollout of the synthesis
pipeline (`rollout` job) and a trial of a `local` agent (`trial` job) get the parent's verdicts on the pairs the spec
foresees; a pair it did not foresee comes back as missed and that item runs once more with its verdict. Without a
judge the rubric stays not graded."""

from __future__ import annotations

import json

import pytest

from coworkenv.judge.endpoint import using_judge
from coworkenv.rollout import run_trials
from coworkenv.rollout.oracle_rollouts import sandboxed_rollouts
from coworkenv.spec.task import TaskSpec
from coworkenv.validate import judging
from coworkenv.validate.judging import spec_pairs
from tests.support.judge_endpoint import judging as judge_server
from tests.support.sandbox import RUNTIME_NAMES, usable_runtime
from tests.validate.test_battery import BASE, spec
from tests.validate.test_calibration import GOOD

RUBRIC = TaskSpec.model_validate(spec(checks=[*BASE["checks"], GOOD]))
PLAIN = TaskSpec.model_validate(BASE)


@pytest.fixture
def judge(tmp_path):
    with judge_server(tmp_path / "verdicts") as (server, _):
        yield server


@pytest.fixture(params=RUNTIME_NAMES)
def runtime(request: pytest.FixtureRequest) -> str:
    return usable_runtime(request.param).name


def _rollouts(runtime: str) -> list[dict]:
    results = sandboxed_rollouts([RUBRIC, PLAIN], "oracle", workers=1, runtime=runtime, budget_s=30)
    assert all(r.ok for r in results), [(r.error_code, r.error) for r in results]
    assert [r.index for r in results] == [0, 1]
    return [r.output for r in results]


def test_the_sandboxed_oracle_rollout_grades_its_rubric_from_the_parents_verdicts(judge, runtime: str):
    rows = _rollouts(runtime)
    assert [(r["task_id"], r["score"], r["passed"]) for r in rows] == [(RUBRIC.id, 1.0, True), (PLAIN.id, 1.0, True)]
    assert judge.requests == len(spec_pairs(RUBRIC.to_json()))  # each foreseen pair once, nothing missed


def test_a_rollout_that_asks_about_an_unforeseen_pair_runs_again_with_its_verdict(judge, runtime: str, monkeypatch):
    monkeypatch.setattr(judging, "spec_pairs", lambda text: [])
    rows = _rollouts(runtime)
    assert [r["score"] for r in rows] == [1.0, 1.0] and 0 < judge.requests <= len(spec_pairs(RUBRIC.to_json()))


def test_without_a_judge_the_sandboxed_rollout_leaves_the_rubric_not_graded(runtime: str):
    with using_judge(None):
        rubric, plain = _rollouts(runtime)
    assert rubric["score"] < 1.0 and plain["score"] == 1.0


def _trials(agent: str, runtime: str) -> list:
    return run_trials([RUBRIC], agent, trials=2, workers=2, runtime=runtime, episode_wall_s=20)


def test_a_sandboxed_oracle_trial_grades_its_rubric(judge, runtime: str):
    records = _trials("oracle", runtime)
    assert [(r.status, r.grade.score, r.grade.ungraded) for r in records] == [("ok", 1.0, [])] * 2, [
        r.error for r in records
    ]
    assert judge.requests == len(spec_pairs(RUBRIC.to_json()))


def test_a_trial_with_an_unforeseen_pair_runs_again_with_its_verdict(judge, runtime: str, monkeypatch):
    monkeypatch.setattr(judging, "spec_pairs", lambda text: [])
    records = _trials("oracle", runtime)
    assert [(r.grade.score, r.grade.ungraded) for r in records] == [(1.0, [])] * 2
    assert judge.requests == 1  # the oracle's answer, asked once for both trials' reruns


def test_without_a_judge_a_sandboxed_trial_leaves_the_rubric_not_graded(runtime: str):
    with using_judge(None):
        records = _trials("oracle", runtime)
    assert [(r.grade.score < 1.0, r.grade.ungraded) for r in records] == [(True, [GOOD["id"]])] * 2


def test_a_job_reports_at_most_max_missed_pairs():
    from coworkenv.judge.table import MAX_MISSED, TableJudge, missed_from_json, missed_json

    table = TableJudge([])
    for i in range(MAX_MISSED + 5):
        table.verdict("c", f"text {i}")
    assert len(missed_json(table)) == MAX_MISSED
    hostile = [["c", "t"]] * (MAX_MISSED + 1) + [["c"], "x", [1, 2]]
    assert missed_from_json(hostile) == [("c", "t")] * MAX_MISSED and missed_from_json({"a": 1}) == []
    assert json.dumps(missed_json(table))
