"""Rejection sampling: ok trials at or above the threshold, deduplicated, as `sft` rows TRL can read."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from coworkenv.data.schemas import SFT
from coworkenv.errors import CoworkEnvError
from coworkenv.rollout import run_trials
from coworkenv.rollout.rejection import select_for_sft, sft_from_trials, write_sft
from coworkenv.rollout.trial_record import zero_score


@pytest.fixture(scope="module")
def oracle(examples):
    return run_trials(examples, "oracle", trials=3, runtime="none", workers=1)


def test_identical_successes_count_once_per_task(examples, oracle):
    kept = select_for_sft(oracle)
    assert [r.key for r in kept] == [(s.id, 0) for s in examples]  # the oracle's three trials are one trajectory


def test_only_ok_trials_at_or_above_the_threshold_are_kept(examples):
    rand = run_trials(examples, "random", trials=2, runtime="none", workers=1)
    oracle = run_trials(examples[:3], "oracle", runtime="none", workers=1)
    failed = oracle[0].model_copy(
        update={"status": "failed", "error": "reply_error: down", "grade": zero_score(oracle[0].grade)}
    )
    assert select_for_sft([*rand, failed, *oracle[1:]]) == oracle[1:]
    # a lower threshold admits partial successes; random's trials differ from each other, so they are all distinct
    low = select_for_sft(rand, threshold=0.01)
    assert (
        low
        and all(r.grade.score >= 0.01 for r in low)
        and len(low) == len({(r.task_id, r.grade.evidence_hash) for r in low})
    )
    with pytest.raises(CoworkEnvError, match="threshold"):
        select_for_sft(rand, threshold=0)


def test_sft_rows_are_written_for_trl(examples, oracle, tmp_path):
    table = sft_from_trials(oracle, examples)
    assert table.schema.equals(SFT) and table.num_rows == len(examples)
    dest = tmp_path / "sft.parquet"
    assert write_sft(oracle, examples, dest) == len(examples)
    rows = pq.read_table(dest).to_pylist()
    first, record = rows[0], oracle[0]
    assert first["trajectory_id"] == f"{record.task_id}/oracle/0" and first["score"] == 1.0
    assert [m["role"] for m in first["messages"]] == [m["role"] for m in record.messages]
    calls = [c for m in first["messages"] for c in m["tool_calls"] or ()]
    assert calls and all(isinstance(json.loads(c["function"]["arguments"]), dict) for c in calls)
    assert [t["function"]["name"] for t in json.loads(first["tools"])] == examples[0].tools
