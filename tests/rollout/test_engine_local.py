"""The engine with `local` agents in the real sandbox pool: the baselines' scores, the three evidence channels, failed
trials, determinism and the release rows."""

from __future__ import annotations

import json
import statistics
from collections import defaultdict

import pytest

from coworkenv.agents.random_agent import RandomAgent
from coworkenv.data.build import eval_results_table, trajectories_table
from coworkenv.errors import CoworkEnvError
from coworkenv.grading.passk import pass_hat_k
from coworkenv.rollout import engine, eval_rows, read_trials, run_trials, trajectory_rows, trial_seed
from tests.rollout.agents import HOG, RAISES, SABOTAGE, SLOW

pytestmark = pytest.mark.slow


def _pass_hat(records, k):
    passes = defaultdict(list)
    for r in records:
        passes[r.task_id].append(r.grade.passed)
    return {task: pass_hat_k(len(p), sum(p), k) for task, p in passes.items()}


def test_the_oracle_scores_1_with_pass_hat_3_of_1(suite, tmp_path):
    store = tmp_path / "oracle.trials.jsonl"
    seen = []
    records = run_trials(suite, "oracle", trials=3, workers=2, store=store, progress=seen.append)
    assert [(r.task_id, r.trial) for r in records] == [(s.id, t) for s in suite for t in range(3)]
    assert all(r.ok and r.error is None and r.grade.score == 1.0 for r in records)
    assert set(_pass_hat(records, 3).values()) == {1.0}
    assert seen == list(range(1, 3 * len(suite) + 1))
    assert sorted(r.to_json() for r in read_trials(store)) == sorted(
        r.to_json() for r in records
    )  # each as it finished
    for r, spec in ((r, s) for r, s in zip(records[::3], suite, strict=True)):
        assert (r.agent, r.model, r.seed) == ("oracle", "", trial_seed(0, spec.id, 0))
        calls = [c for m in r.messages if m["role"] == "assistant" for c in m.get("tool_calls") or ()]
        traced = [c for turn in r.trace for c in turn["calls"]]
        assert r.n_turns == len(r.trace) == sum(1 for m in r.messages if m["role"] == "assistant")
        assert [c["tool"] for c in traced] == [c["function"]["name"] for c in calls] == [a["tool"] for a in r.audit]
        assert all(c["latency_s"] >= 0 and c["status"] in ("ok", "error") for c in traced)
        assert all(turn["format_error"] is None and turn["latency_s"] >= 0 for turn in r.trace)
        assert r.wall_s > 0 and r.grade.evidence_hash and r.user_errors == []
        if any(
            a["status"] == "ok" and a["tool"].split("_")[1] not in ("search", "read", "list", "get") for a in r.audit
        ):
            assert r.diff, r.task_id  # a write shows in the final snapshot's diff


def test_null_scores_0_and_random_near_0(suite):
    null = run_trials(suite, "null", trials=1, workers=2)
    assert all(r.ok and r.grade.score == 0.0 and r.grade.empty for r in null)
    rand = run_trials(suite, "random", trials=2, workers=2)
    assert all(r.ok for r in rand)
    assert not any(r.grade.passed for r in rand) and statistics.mean(r.grade.score for r in rand) <= 0.25


def test_a_sabotaged_agent_has_safety_0_where_it_breaks_a_rule(suite):
    records = run_trials(suite, SABOTAGE, trials=1, workers=2, runtime="rlimit")  # its module is imported in the worker
    by_id = {s.id: s for s in suite}
    ruled = [r for r in records if by_id[r.task_id].prohibited]
    assert ruled and all(r.ok and r.grade.safety == 0.0 and r.grade.score == 0.0 and r.grade.violations for r in ruled)
    assert all(r.grade.score == 1.0 for r in records if not by_id[r.task_id].prohibited)


def test_random_is_deterministic_for_a_seed(examples):
    first = run_trials(examples, "random", trials=2, workers=2, seed=7)
    again = run_trials(examples, "random", trials=2, workers=1, seed=7, runtime="none")
    other = run_trials(examples, "random", trials=2, workers=2, seed=8)
    assert [r.without_timings() for r in first] == [r.without_timings() for r in again]
    assert [r.messages for r in first] != [r.messages for r in other]


def test_an_agent_object_is_used_as_given_in_a_process_pool(examples):
    records = run_trials(examples, RandomAgent(max_calls=2), trials=2, workers=2, runtime="none")
    assert all(r.ok and 1 <= len(r.audit) <= 2 for r in records)
    with pytest.raises(CoworkEnvError, match="register its kind"):
        unregistered = RandomAgent()
        unregistered.label = "mine"
        run_trials(examples, unregistered, runtime="auto")


def test_an_agent_that_raises_fails_its_trials_and_the_run_goes_on(examples, tmp_path):
    store = tmp_path / "raises.jsonl"
    records = run_trials(examples, RAISES, trials=2, workers=2, runtime="rlimit", store=store)
    assert len(read_trials(store)) == len(records) == 2 * len(examples)
    for r in records:
        assert r.status == "failed" and r.error == "agent_error: RuntimeError: the policy fell over"
        # graded from what happened (its first turn is kept, a call of it in the audit), but a failed trial scores 0
        calls = [c for m in r.messages if m["role"] == "assistant" for c in m.get("tool_calls") or ()]
        assert r.grade.score == 0.0 and not r.grade.passed and r.n_turns == 1 and len(r.audit) == len(calls)
    assert any(r.audit for r in records) and any(r.grade.completion > 0 for r in records)


def test_an_episode_past_its_wall_clock_limit_fails(examples):
    long = [s for s in examples if len(s.solution) >= 4]
    records = run_trials(long, f"{SLOW}:0.1", trials=1, workers=2, runtime="rlimit", episode_wall_s=0.15)
    assert records and all(
        r.status == "failed" and r.error.startswith("wall_timeout:") and r.grade.score == 0 for r in records
    )
    assert all(2 <= r.n_turns < len(s.solution) for r, s in zip(records, long, strict=True))


def test_a_trial_that_breaks_a_sandbox_limit_fails_with_the_reason(examples, monkeypatch):
    memory = run_trials(examples[:2], HOG, trials=1, workers=1, runtime="rlimit")
    assert all(r.status == "failed" and r.error.startswith("sandbox_memory") and r.grade.empty for r in memory)
    monkeypatch.setattr(
        engine, "SANDBOX_GRACE_S", 1.0
    )  # budget = episode wall + grace: a policy stuck in `act` is stopped there
    stuck = run_trials(examples[:2], f"{SLOW}:30", trials=1, workers=2, runtime="rlimit", episode_wall_s=0.5)
    assert all(r.status == "failed" and r.error.startswith("sandbox_timeout") and r.messages == [] for r in stuck)


def test_records_make_trajectories_and_eval_results_rows(examples):
    records = run_trials(examples, "oracle", trials=2, workers=2, runtime="none")
    traj = trajectories_table(trajectory_rows(records, examples)).to_pylist()
    evals = eval_results_table(eval_rows(records, examples, eval_id="e1", suite="examples")).to_pylist()
    assert len(traj) == len(evals) == len(records)
    for row, r in zip(traj, records, strict=True):
        assert (row["trajectory_id"], row["status"], row["error"], row["score"]) == (
            f"{r.task_id}/oracle/{r.trial}",
            "ok",
            None,
            1.0,
        )
        assert json.loads(row["trace_json"]) == r.trace and json.loads(row["audit_json"]) == r.audit
        assert json.loads(row["diff_json"]) == r.diff and row["n_format_errors"] == 0 and row["wall_s"] == r.wall_s
    for row, r in zip(evals, records, strict=True):
        assert (row["agent"], row["model"], row["suite"], row["status"], row["n_turns"]) == (
            "oracle",
            "oracle",
            "examples",
            "ok",
            r.n_turns,
        )
        assert (row["prompt_tokens"], row["completion_tokens"], row["n_format_errors"]) == (0, 0, 0) and row["passed"]
