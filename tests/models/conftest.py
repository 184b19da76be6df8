"""A data root holding real published evaluations (the oracle, the null and the random agent on eight synthesized
tasks, two trials each), copied fresh for each test, and checkpoints shaped like the training jobs'."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

AGENTS = ("oracle", "null", "random")


def trained(dest: Path, tiny: Path, *, base: str | Path, job: str = "sft", release: str = "r-train-0001", **extra) -> Path:
    """A checkpoint as a training job leaves it: the model files (the tiny model's) and a training.json."""
    shutil.copytree(tiny, dest)
    (dest / "coworkenv_model.json").unlink()  # the tiny model's card: not a trained checkpoint's
    record = {"job": job, "config": {"model": str(base), "max_steps": 6}, "release_id": release, "base_model": str(base),
              "code_version": "0.1.0+gabc1234", "steps": 6, **extra}  # fmt: skip
    (dest / "training.json").write_text(json.dumps(record), encoding="utf-8")
    return dest


@pytest.fixture(scope="session")
def evaluated(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """(data root, agent → eval release id): each agent evaluated (and published) on one 8-task suite file."""
    from coworkenv.pipeline.config import EvaluationConfig
    from coworkenv.pipeline.evaluate import evaluate
    from coworkenv.synth.generate import GenerateRequest, generate
    from tests.support.suites import write_suite

    base = tmp_path_factory.mktemp("models-evals")
    specs, _ = generate(GenerateRequest(n=8, seed=3))
    suite = write_suite(base / "suite8.jsonl", specs)
    releases = {}
    for agent in AGENTS:
        # The random agent's calls follow the tools' schemas: a seed where it beats the null agent on 7 of 8 tasks
        # (p < 0.05), which test_promotion needs; new optional tool arguments change its draws.
        config = EvaluationConfig(agent=agent, suite=str(suite), trials=2, runtime="none", workers=1, seed=44)
        releases[agent] = evaluate(config, f"eval-{agent}", base / "data").release_id
    return base / "data", releases


@pytest.fixture
def root(evaluated, tmp_path) -> Path:
    """A fresh copy of the evaluated data root: each test writes its own registry."""
    return Path(shutil.copytree(evaluated[0], tmp_path / "data"))


@pytest.fixture
def evals(evaluated) -> dict[str, str]:
    return evaluated[1]
