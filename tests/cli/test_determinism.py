"""Generation and validation are byte-deterministic across processes: the console script run twice, in fresh
interpreters with different string-hash seeds, writes the same bytes (docs/architecture.md, "Data flow": the same
settings and run id publish the same release)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import ROOT
from tests.support.processes import HASH_SEEDS, tree_digests

CLI = Path(sys.executable).parent / "coworkenv"


def cli(*args: str | Path, hash_seed: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "COWORKENV_DATA_ROOT"} | {"PYTHONHASHSEED": hash_seed}
    return subprocess.run(
        [str(CLI), *map(str, args)], capture_output=True, text=True, env=env, cwd=ROOT, timeout=600, check=False
    )


@pytest.mark.slow
def test_generate_and_validate_write_the_same_bytes_in_two_processes(tmp_path: Path):
    for seed in HASH_SEEDS:
        root = tmp_path / seed
        proc = cli(
            "generate",
            "--n",
            "16",
            "--seed",
            "3",
            "--shards",
            "2",
            "--run-id",
            "det",
            "--data-root",
            root,
            hash_seed=seed,
        )
        assert proc.returncode == 0, proc.stderr
        proc = cli("validate", "--run-id", "det", "--data-root", root, hash_seed=seed)
        assert proc.returncode == 0 and "run det: 16/16 task(s) valid" in proc.stdout, proc.stdout + proc.stderr
    first, second = (tree_digests(tmp_path / seed / "runs" / "det") for seed in HASH_SEEDS)
    assert first == second
    assert {"plan.json", "generated/shard-0000.tasks.jsonl", "validated/shard-0001.validations.jsonl"} <= set(first)


def test_a_plan_is_the_same_in_two_processes(tmp_path: Path):
    profile = tmp_path / "profile.json"
    profile.write_text(
        '{"model": "m", "rows": [{"capability": "retrieval", "difficulty": 3, "attempts": 50, "pass_rate": 0.5},'
        ' {"capability": "safety", "difficulty": 2, "attempts": 50, "pass_rate": 0.95}]}'
    )
    for seed in HASH_SEEDS:
        proc = cli(
            "plan",
            "--profile",
            profile,
            "--n",
            "3000",
            "--seed",
            "5",
            "--out",
            tmp_path / f"plan-{seed}.json",
            hash_seed=seed,
        )
        assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "plan-1.json").read_bytes() == (tmp_path / "plan-2.json").read_bytes()
