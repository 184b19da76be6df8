"""The trials file: whole lines, a torn last line dropped, one writer, and a run that resumes where a killed one stopped
without a lost or duplicated row."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from coworkenv.errors import CoworkEnvError
from coworkenv.rollout import TrialStore, read_trials, run_trials
from tests.rollout.agents import SLOW, BatchOracle
from tests.support import ROOT


@pytest.fixture(scope="module")
def records(examples):
    return run_trials(examples[:4], "oracle", trials=2, runtime="none", workers=1)


def test_records_round_trip_through_the_file(records, tmp_path):
    path = tmp_path / "t.jsonl"
    with TrialStore(path) as store:
        assert store.records == []
        for r in records:
            store.append(r)
    assert read_trials(path) == records
    assert path.read_text().count("\n") == len(records)
    with TrialStore(path) as store:
        assert store.records == records


def test_a_torn_last_line_is_dropped_and_cut_off(records, tmp_path):
    path = tmp_path / "t.jsonl"
    with TrialStore(path) as store:
        for r in records[:3]:
            store.append(r)
    whole = path.read_bytes()
    path.write_bytes(whole + records[3].to_json().encode()[:100])  # killed in the middle of a write
    assert read_trials(path) == records[:3]
    with TrialStore(path) as store:
        assert store.records == records[:3] and path.read_bytes() == whole
        store.append(records[3])
    assert read_trials(path) == records[:4]


def test_a_damaged_or_duplicated_line_is_refused(records, tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text(records[0].to_json() + "\n{not json\n" + records[1].to_json() + "\n")
    with pytest.raises(CoworkEnvError, match="line 2: not a trial record"):
        TrialStore(path).open()
    path.write_text(records[0].to_json() + "\n" + records[0].to_json() + "\n")
    with pytest.raises(CoworkEnvError, match="appears twice"):
        read_trials(path)


def test_one_writer_at_a_time(tmp_path):
    with TrialStore(tmp_path / "t.jsonl"), pytest.raises(CoworkEnvError, match="another run is writing"):
        TrialStore(tmp_path / "t.jsonl").open()


def test_a_rerun_skips_finished_trials(examples, tmp_path):
    path = tmp_path / "t.jsonl"
    first = run_trials(examples, BatchOracle(examples, 2), trials=1, store=path)
    agent = BatchOracle(examples, 2)
    seen = []
    second = run_trials(examples, agent, trials=2, store=path, progress=seen.append)
    assert second[::2] == first  # the stored ones, as they were
    assert {seed for seeds in agent.seeds_per_call for seed in seeds} == {
        r.seed for r in second[1::2]
    }  # only trial 1 ran
    assert seen[0] == len(examples) and seen[-1] == 2 * len(examples)
    assert len(read_trials(path)) == 2 * len(examples)


def test_a_file_of_another_agent_or_seed_is_refused(examples, tmp_path):
    path = tmp_path / "t.jsonl"
    run_trials(examples[:2], "oracle", store=path, runtime="none")
    with pytest.raises(CoworkEnvError, match="trials of agent 'oracle', not 'null'"):
        run_trials(examples[:2], "null", store=path, runtime="none")
    with pytest.raises(CoworkEnvError, match="another seed"):
        run_trials(examples[:2], "oracle", store=path, runtime="none", seed=1)


CHILD = """
import sys
from coworkenv.rollout import run_trials
from coworkenv.synth.generate import GenerateRequest, generate
import tests.rollout.agents
specs, _ = generate(GenerateRequest(n=int(sys.argv[2]), seed=11))
run_trials(specs, sys.argv[3], trials=2, workers=2, runtime="rlimit", store=sys.argv[1])
"""


@pytest.mark.slow
def test_a_killed_run_continues_without_lost_or_duplicated_rows(tmp_path):
    n, agent = 30, f"{SLOW}:0.02"
    path = tmp_path / "killed.jsonl"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(path), str(n), agent], cwd=ROOT, env=env)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and (not path.exists() or path.read_bytes().count(b"\n") < 10):
            assert child.poll() is None, "the run ended before it was killed"
            time.sleep(0.01)
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait()
    assert child.returncode == -signal.SIGKILL
    before = read_trials(path)
    assert 10 <= len(before) < 2 * n
    with open(path, "ab") as f:  # and as if the kill had landed in the middle of a write
        f.write(before[0].to_json().encode()[:-40])

    from coworkenv.synth.generate import GenerateRequest, generate

    specs, _ = generate(GenerateRequest(n=n, seed=11))
    after = run_trials(specs, agent, trials=2, workers=2, runtime="rlimit", store=path)
    stored = read_trials(path)
    assert len(after) == len(stored) == 2 * n and len({r.key for r in stored}) == 2 * n
    assert stored[: len(before)] == before  # the finished ones, unchanged and first
    assert {r.key: r for r in after} == {r.key: r for r in stored}
    assert all(r.ok and r.grade.score == 1.0 for r in stored)
