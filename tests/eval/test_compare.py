"""Paired comparison of two evaluations (docs/design/evaluation.md, "Evaluation metrics and reports")."""

from __future__ import annotations

import json

import numpy as np
import pytest

from coworkenv.errors import CoworkEnvError
from coworkenv.eval.compare import Comparison, compare
from tests.support.eval_rows import bernoulli_rows, task

CAPS = (["retrieval"], ["communication", "multi_step"], ["multi_turn"])


def _suite(probs, seed, agent):
    rows = bernoulli_rows(probs, 3, seed=seed, agent=agent)
    for row in rows:  # three capability mixes, by task number
        row["capabilities"] = CAPS[int(row["task_id"][1:]) % 3]
        row["benchmark_group"] = ("general", "multi_step", "multi_turn")[int(row["task_id"][1:]) % 3]
    return rows


def test_identical_runs_differ_by_nothing():
    rows = _suite(np.linspace(0.1, 0.9, 30), seed=1, agent="a")
    c = compare(rows, rows)
    assert c.n_paired == 30 and c.only_base == c.only_candidate == 0
    for delta in (c.overall.mean_score, c.overall.pass_rate, c.capabilities["retrieval"].mean_score):
        assert delta.value == delta.lo == delta.hi == 0.0
        assert delta.p_value == 1.0
    assert all(t.score_delta == 0.0 for t in c.tasks)


def test_a_clearly_better_candidate_is_significant():
    base = _suite([0.2] * 30, seed=1, agent="base")
    cand = _suite([0.8] * 30, seed=2, agent="cand")
    c = compare(base, cand)
    assert (c.base_agent, c.candidate_agent) == ("base", "cand")
    assert c.overall.pass_rate.p_value < 0.05 and c.overall.mean_score.p_value < 0.05
    assert 0 < c.overall.pass_rate.lo <= c.overall.pass_rate.value <= c.overall.pass_rate.hi
    assert c.overall.pass_rate.value == pytest.approx(c.overall.pass_rate.candidate - c.overall.pass_rate.base)
    assert set(c.capabilities) == {"retrieval", "communication", "multi_step", "multi_turn"}
    assert c.capabilities["communication"].n_tasks == c.capabilities["multi_step"].n_tasks == 10
    assert list(c.groups) == ["general", "multi_step", "multi_turn"]
    assert "sign-flip" in c.test


def test_per_task_and_per_capability_deltas_by_hand():
    base = task("a", [1.0, 0.0], capabilities=["retrieval"]) + task("b", [0.5, 0.5], capabilities=["authoring"])
    cand = task("a", [1.0, 1.0], capabilities=["retrieval"]) + task("b", [0.0, 0.5], capabilities=["authoring"])
    c = compare(base, cand)
    a, b = c.tasks
    assert (a.task_id, a.score_delta, a.pass_rate_delta) == ("a", 0.5, 0.5)
    assert (b.task_id, b.score_delta, b.pass_rate_delta) == ("b", -0.25, 0.0)
    assert c.overall.mean_score.value == pytest.approx(0.125)
    assert c.capabilities["retrieval"].mean_score.value == 0.5
    assert c.capabilities["authoring"].pass_rate.value == 0.0
    # Deltas 0.5 and −0.25: the four sign patterns give |mean| 0.125, 0.375, 0.375, 0.125, all ≥ the observed 0.125.
    assert c.overall.mean_score.p_value == 1.0


def test_unpaired_tasks_are_reported_and_left_out():
    base = [row for i in range(5) for row in task(f"t{i}", [1.0])]
    cand = [row for i in range(3, 8) for row in task(f"t{i}", [0.0], agent="b")]
    c = compare(base, cand)
    assert (c.n_paired, c.only_base, c.only_candidate) == (2, 3, 3)
    assert c.only_base_ids == ["t0", "t1", "t2"] and c.only_candidate_ids == ["t5", "t6", "t7"]
    assert [t.task_id for t in c.tasks] == ["t3", "t4"]
    assert c.overall.mean_score.value == -1.0


def test_deterministic_and_round_trips():
    base, cand = _suite(np.linspace(0, 1, 50), 1, "a"), _suite(np.linspace(0, 1, 50), 2, "b")
    c = compare(base, cand)
    assert c.to_json() == compare(list(reversed(base)), cand).to_json()
    assert Comparison.model_validate(json.loads(c.to_json())) == c


def test_nothing_to_pair_is_an_error():
    with pytest.raises(CoworkEnvError, match="share no task"):
        compare(task("a", [1.0]), task("b", [1.0]))
    with pytest.raises(CoworkEnvError, match="at least 1"):
        compare(task("a", [1.0]), task("a", [1.0]), permutations=0)
