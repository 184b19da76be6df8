"""The engine with `batch` agents (lock-step ticks) and `async` agents (asyncio tasks, the `openai:` agent against a
real endpoint process), and their failures."""

from __future__ import annotations

import time

import pytest

from coworkenv.agents import load_agent
from coworkenv.errors import CoworkEnvError
from coworkenv.rollout import run_trials
from tests.rollout.agents import AsyncOracle, BatchOracle, SlowBatchOracle
from tests.support.instant_endpoint import instant_endpoint

TRIALS = 2


def test_a_batch_agent_steps_episodes_in_lock_step(suite):
    agent = BatchOracle(suite, TRIALS)
    records = run_trials(suite, agent, trials=TRIALS, batch_size=8)
    assert len(records) == TRIALS * len(suite) and all(r.ok and r.grade.score == 1.0 for r in records)
    # every call carries one request per open episode (never two of the same), at most batch_size, and the open
    # episodes are refilled from the queue: the batch is full until the queue runs dry
    assert max(agent.sizes) == 8 and all(len(set(seeds)) == len(seeds) for seeds in agent.seeds_per_call)
    first_short = next(i for i, n in enumerate(agent.sizes) if n < 8)
    assert all(n == 8 for n in agent.sizes[:first_short]) and agent.sizes[first_short:] == sorted(
        agent.sizes[first_short:], reverse=True
    )
    assert sum(agent.sizes) == sum(r.n_turns for r in records)
    # what a Reply carries goes into the trace: tokens, the first turn's format error
    r = records[0]
    assert (
        r.n_format_errors == 1
        and r.trace[0]["format_error"] == "bad json"
        and r.prompt_tokens > 0
        and r.completion_tokens == r.n_turns
    )


def test_an_async_agent_runs_episodes_concurrently_up_to_the_limit(suite):
    agent = AsyncOracle(suite, TRIALS)
    records = run_trials(suite, agent, trials=TRIALS, concurrency=5)
    assert len(records) == TRIALS * len(suite) and all(r.ok and r.grade.score == 1.0 for r in records)
    assert agent.max_in_flight == 5 and agent.calls == sum(r.n_turns for r in records)
    agent = AsyncOracle(suite[:12], 1)
    agent.concurrency = 3  # the agent's own limit is the default (an episode's clock starts once it is let in)
    assert all(r.ok for r in run_trials(suite[:12], agent)) and agent.max_in_flight == 3


@pytest.mark.parametrize("make", [BatchOracle, AsyncOracle], ids=["batch", "async"])
def test_failed_replies_fail_their_trials_and_the_run_goes_on(examples, make, tmp_path):
    agent = make(examples, TRIALS)
    agent.fail_task(examples[0].id, TRIALS, "error")
    agent.fail_task(examples[1].id, TRIALS, "garbage")
    records = run_trials(examples, agent, trials=TRIALS, store=tmp_path / "t.jsonl", batch_size=4, concurrency=4)
    by_task = {r.task_id: r for r in records}
    assert by_task[examples[0].id].error == "reply_error: endpoint down after 3 retries"
    assert by_task[examples[1].id].error.startswith("bad_output: each tool call needs")
    failed = [r for r in records if r.status == "failed"]
    assert len(failed) == 2 * TRIALS and all(r.grade.score == 0.0 and r.n_turns == 0 for r in failed)
    assert all(r.ok and r.grade.score == 1.0 for r in records if r.task_id not in (examples[0].id, examples[1].id))


def test_a_batch_call_that_raises_fails_the_episodes_of_that_batch_only(examples):
    agent = BatchOracle(examples, 1)
    agent.fail_task(examples[5].id, 1, "raise")
    records = run_trials(examples, agent, trials=1, batch_size=4)
    failed = {r.task_id for r in records if r.status == "failed"}
    bad_seed = next(iter(agent.fail))
    in_that_call = next(seeds for seeds in agent.seeds_per_call if bad_seed in seeds)
    assert (
        failed == {agent.specs[seed].id for seed in in_that_call} and len(failed) > 1
    )  # the episodes of that one call
    assert all(
        r.error == "agent_error: RuntimeError: the model server went away" for r in records if r.task_id in failed
    )
    assert all(r.grade.score == 1.0 for r in records if r.task_id not in failed)


def test_an_async_agent_that_raises_or_hangs_fails_that_trial(examples):
    agent = AsyncOracle(examples, 1)
    agent.fail_task(examples[2].id, 1, "raise")
    agent.hang = {seed for seed, spec in agent.specs.items() if spec.id == examples[3].id}
    records = run_trials(examples, agent, trials=1, episode_wall_s=1.0)
    by_task = {r.task_id: r for r in records}
    assert by_task[examples[2].id].error == "agent_error: RuntimeError: the model server went away"
    assert by_task[examples[3].id].error.startswith("wall_timeout:") and by_task[examples[3].id].grade.score == 0
    assert sum(r.ok for r in records) == len(examples) - 2


def test_a_batch_episode_s_time_limit_counts_its_own_replies_not_the_wait_for_the_others(examples):
    """Each tick takes 30 ms of wall time for the whole batch; each reply reports 1 ms as its own. Episodes of 9 or
    more turns span more wall time than their 0.25 s limit while they wait for the batch, and still finish."""
    specs = examples[:4]
    agent = SlowBatchOracle(specs, 1, tick_s=0.03)
    records = run_trials(specs, agent, trials=1, batch_size=4, episode_wall_s=0.25)
    assert all(r.ok and r.grade.score == 1.0 for r in records), [r.error for r in records]
    assert max(r.wall_s for r in records) > 0.25  # the limit in wall time, passed while waiting
    assert all(sum(turn["latency_s"] for turn in r.trace) < 0.05 for r in records)


def test_a_batch_episode_whose_own_replies_take_too_long_ends_with_wall(examples):
    specs = examples[:4]
    agent = SlowBatchOracle(specs, 1, tick_s=0.0)
    agent.slow = {
        seed: 0.1 for seed, spec in agent.specs.items() if spec.id == specs[1].id
    }  # 100 ms per reply: 3 turns pass 0.25 s
    records = run_trials(specs, agent, trials=1, batch_size=4, episode_wall_s=0.25)
    slow = records[1]
    assert (
        slow.status == "failed"
        and slow.error.startswith("wall_timeout: the episode's own time")
        and "limit of 0.25 s" in slow.error
    )
    assert (
        slow.n_turns == 3 and slow.grade.score == 0 and slow.wall_s < 0.25
    )  # its own time, not the wall clock, ran out
    assert all(r.ok for r in records if r is not slow)


def test_an_episode_whose_context_is_full_ends_there_and_is_graded_as_it_stands(examples):
    specs = examples[:3]
    agent = BatchOracle(specs, 1)
    agent.fail_task(specs[0].id, 1, "full")
    records = run_trials(specs, agent, trials=1, batch_size=4)
    full = records[0]
    assert full.ok and full.error is None and full.n_turns == 2  # no failed trial: the third turn could not be written
    assert 0 <= full.grade.score < 1.0 and all(r.ok and r.grade.score == 1.0 for r in records[1:])


def test_the_evaluation_default_time_limit_is_the_engine_s():
    from coworkenv.pipeline.config import EvaluationConfig
    from coworkenv.rollout.engine import DEFAULT_EPISODE_WALL_S

    assert EvaluationConfig.model_fields["episode_wall_s"].default == DEFAULT_EPISODE_WALL_S


def test_a_simulated_user_factory_is_used_in_process_only(examples):
    with pytest.raises(CoworkEnvError, match="in-process"):
        run_trials(examples[:2], "oracle", workers=2, user=lambda spec: None)
    with pytest.raises(CoworkEnvError, match="unknown simulated user"):
        run_trials(examples[:2], "oracle", user="llm")


def test_the_openai_agent_through_the_engine_leaves_no_connection_open(generated):
    # the engine's event loop ends with the agent's aclose: no socket outlives the run (the endpoint counts them)
    with instant_endpoint(calls=2) as endpoint:
        agent = load_agent("openai:instant", base_url=endpoint.base_url, api_key_env="COWORKENV_TEST_NO_SUCH_VARIABLE")
        records = run_trials(generated[:12], agent, concurrency=4)
        assert all(r.ok for r in records) and sorted(endpoint.stats()["seeds"]) == sorted(
            r.seed for r in records for _ in r.trace
        )
        assert [len(r.trace) for r in records] == [3] * 12  # two tool-call turns, then the answer
        deadline = time.monotonic() + 30
        while endpoint.stats()["connections"] > 1 and time.monotonic() < deadline:  # 1: the stats request's own
            time.sleep(0.05)
        assert endpoint.stats()["connections"] == 1
