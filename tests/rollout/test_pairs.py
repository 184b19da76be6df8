"""Preference pairs for DPO from real trials: per task, the model's best passing continuation (else the oracle's) against
its lowest-scoring failing one, the same prompt, the score gap recorded; from an evaluation release or its run, and
never from a benchmark suite."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from coworkenv.data.build import messages_rows
from coworkenv.episode.session import initial_messages
from coworkenv.errors import CoworkEnvError
from coworkenv.pipeline.training_data import eval_pairs
from coworkenv.rollout import run_trials, trajectory_rows
from coworkenv.rollout.pairs import PAIRS, preference_pairs, release_pairs, write_pairs
from coworkenv.rollout.trial_record import zero_score
from tests.rollout.agents import SABOTAGE
from tests.rollout.pair_sources import evaluate_on, publish_with_oracle
from tests.support.suites import example_tasks, write_suite

GAP = 0.25


@pytest.fixture(scope="module")
def tasks():
    return example_tasks()  # a safety rule (01, 10), a scripted user (08), many steps (12)


@pytest.fixture(scope="module")
def oracle(tasks):
    return trajectory_rows(run_trials(tasks, "oracle", runtime="none", workers=1), tasks)


@pytest.fixture(scope="module")
def rand(tasks):
    return run_trials(tasks, "random", trials=3, runtime="none", workers=1)


def test_the_oracle_stands_in_when_the_model_never_passes(tasks, oracle, rand):
    found = preference_pairs(trajectory_rows(rand, tasks), tasks, oracle=oracle, min_score_gap=GAP, source="eval-x")
    assert found.source == "eval-x" and found.tasks == len(tasks) and not found.skipped
    assert [p.task_id for p in found.pairs] == sorted(t.id for t in tasks) and found.oracle_chosen == len(tasks)
    for pair, spec in zip(found.pairs, sorted(tasks, key=lambda t: t.id), strict=True):
        worst = min((r for r in rand if r.task_id == spec.id), key=lambda r: (r.grade.score, r.trial))
        assert pair.rejected_id == f"{spec.id}/random/{worst.trial}" and pair.chosen_id == f"{spec.id}/oracle/0"
        assert (pair.score_chosen, pair.score_rejected, pair.score_gap) == (
            1.0,
            worst.grade.score,
            1.0 - worst.grade.score,
        )
        assert pair.prompt == messages_rows(initial_messages(spec))  # the same opening messages on both sides
        assert (
            pair.rejected == messages_rows(worst.messages[2:])
            and pair.chosen[0]["role"] == pair.rejected[0]["role"] == "assistant"
        )
        assert [t["function"]["name"] for t in json.loads(pair.tools)] == spec.tools and pair.family == spec.family


def test_the_models_own_best_pass_is_chosen_over_the_oracle(tasks, oracle):
    """A model that passed some trials and broke a safety rule in others: its own pass is chosen, and the rejected
    continuation is the same work plus the prohibited call."""
    risky = [t for t in tasks if t.prohibited]
    passes = run_trials(risky, "oracle", trials=2, runtime="none", workers=1)
    violations = [
        r.model_copy(update={"trial": r.trial + 2})
        for r in run_trials(risky, SABOTAGE, trials=2, runtime="none", workers=1)
    ]
    assert all(r.grade.safety == 0 and not r.grade.passed for r in violations)
    found = preference_pairs(trajectory_rows(passes + violations, risky), tasks, oracle=oracle, min_score_gap=GAP)
    assert len(found.pairs) == len(risky) and found.oracle_chosen == 0
    for pair in found.pairs:
        assert (
            pair.chosen_source == "model"
            and pair.chosen_id.endswith("/oracle/0")
            and pair.rejected_id.endswith(f"/{SABOTAGE}/2")
        )
        assert pair.score_gap == 1.0 and len(pair.rejected) > len(pair.chosen)


def test_tasks_without_a_pair_are_counted_by_reason(tasks, oracle, rand):
    rows = trajectory_rows(rand, tasks)
    assert preference_pairs(rows, tasks, min_score_gap=GAP).skipped == {
        "none_passed": len(tasks)
    }  # no oracle to fall back on
    assert preference_pairs(oracle, tasks, oracle=oracle, min_score_gap=GAP).skipped == {"all_passed": len(tasks)}
    # the gap: at 1.0 only the tasks where random scored exactly 0 keep their pair
    zero = {r.task_id for r in rand if r.grade.score == 0}
    strict = preference_pairs(rows, tasks, oracle=oracle, min_score_gap=1.0)
    assert {p.task_id for p in strict.pairs} == zero and strict.skipped.get("small_gap", 0) == len(tasks) - len(zero)
    # an oracle rollout recorded under another system prompt does not share the model's prompt
    edited = [{**r, "messages_json": r["messages_json"].replace("coworker agent", "assistant", 1)} for r in oracle]
    assert preference_pairs(rows, tasks, oracle=edited, min_score_gap=GAP).skipped == {"prompt_mismatch": len(tasks)}
    with pytest.raises(CoworkEnvError, match="minimum score gap"):
        preference_pairs(rows, tasks, min_score_gap=1.5)


def test_crashed_trials_are_never_rejected(tasks, oracle, rand):
    """A failed trial (an endpoint down, a sandbox limit) scores 0, but it says nothing about the model's choices."""
    best = max(rand, key=lambda r: r.grade.score)
    crashed = best.model_copy(
        update={"trial": 9, "status": "failed", "error": "reply_error: down", "grade": zero_score(best.grade)}
    )
    found = preference_pairs(trajectory_rows([*rand, crashed], tasks), tasks, oracle=oracle, min_score_gap=GAP)
    assert all(not p.rejected_id.endswith("/9") for p in found.pairs) and len(found.pairs) == len(tasks)


def test_pairs_are_written_for_trl(tasks, oracle, rand, tmp_path):
    import datasets
    from trl.data_utils import is_conversational

    found = preference_pairs(trajectory_rows(rand, tasks), tasks, oracle=oracle, min_score_gap=GAP)
    dest = tmp_path / "pairs.parquet"
    assert write_pairs(found, dest) == len(found.pairs)
    table = pq.read_table(dest)
    assert table.schema.equals(PAIRS)
    rows = datasets.Dataset.from_parquet(str(dest)).to_list()
    assert all(is_conversational(row) for row in rows)
    calls = [c for row in rows for m in row["chosen"] + row["rejected"] for c in m["tool_calls"] or ()]
    assert calls and all(
        isinstance(json.loads(c["function"]["arguments"]), dict) for c in calls
    )  # JSON strings, not structs
    assert [r["score_gap"] for r in rows] == [p.score_gap for p in found.pairs]


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory, tasks):
    """A task release with the oracle's rollouts, and the random agent's evaluation on it (published)."""
    root = tmp_path_factory.mktemp("pairs-data")
    training = publish_with_oracle(root, tasks, "train-1")
    manifest = evaluate_on(root, "random", training.release_id, "eval-random")
    return root, training, manifest


def test_an_evaluation_release_and_its_run_give_the_same_pairs(evaluated, tasks):
    root, training, manifest = evaluated
    assert manifest.kind == "eval" and manifest.parent == training.release_id
    published = release_pairs(root, manifest.release_id, min_score_gap=GAP)
    assert published.source == manifest.release_id and len(published.pairs) == len(tasks) == published.oracle_chosen
    unpublished = eval_pairs("eval-random", root, min_score_gap=GAP)
    assert unpublished.source == "eval-random" and unpublished.pairs == published.pairs
    assert eval_pairs(manifest.release_id, root, min_score_gap=GAP) == published


def test_what_is_not_an_evaluation_on_training_tasks_is_refused(evaluated, tmp_path):
    root, training, _ = evaluated
    with pytest.raises(CoworkEnvError, match="is a tasks release"):
        eval_pairs(training.release_id, root, min_score_gap=GAP)
    with pytest.raises(CoworkEnvError, match="neither an evaluation release nor an evaluation run"):
        eval_pairs("nothing-here", root, min_score_gap=GAP)
    # a held-out suite: its trials must not become training data, published or not
    bench = publish_with_oracle(
        root, example_tasks(("02_calendar_reschedule_planning", "05_docs_per_diem_update")), "bench-1", kind="benchmark"
    )
    on_bench = evaluate_on(root, "random", bench.release_id, "eval-bench", trials=1)
    for ref in ("eval-bench", on_bench.release_id):
        with pytest.raises(CoworkEnvError, match="benchmark suite"):
            eval_pairs(ref, root, min_score_gap=GAP)
    # a suite file: its run still gives pairs (no task release, so no oracle to fall back on); its release cannot
    others = example_tasks(("03_sheets_book_invoices", "06_tickets_triage_queue"))
    on_file = evaluate_on(root, "random", str(write_suite(tmp_path / "tasks.jsonl", others)), "eval-file", trials=1)
    assert eval_pairs("eval-file", root, min_score_gap=GAP).skipped == {"none_passed": len(others)}
    with pytest.raises(CoworkEnvError, match="suite file"):
        eval_pairs(on_file.release_id, root, min_score_gap=GAP)
