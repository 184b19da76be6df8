"""A data root holding real published evaluations (the oracle, the null and the random agent on eight synthesized
tasks, two trials each), copied fresh for each test, and checkpoints shaped like the training jobs'."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

AGENTS = ("oracle", "null", "random")


def trained(
    dest: Path, tiny: Path, *, base: str | Path, job: str = "sft", release: str = "r-train-0001", **extra
) -> Path:
    """A checkpoint as a training job leaves it: the model files (the tiny model's) and a training.json."""
    shutil.copytree(tiny, dest)
    (dest / "coworkenv_model.json").unlink()  # the tiny model's card: not a trained checkpoint's
    record = {
        "job": job,
        "config": {"model": str(base), "max_steps": 6},
        "release_id": release,
        "base_model": str(base),
        "code_version": "0.1.0+gabc1234",
        "steps": 6,
        **extra,
    }
    (dest / "training.json").write_text(json.dumps(record), encoding="utf-8")
    return dest


@pytest.fixture(scope="session")
def evaluated(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """(data root, agent → eval release id): each agent evaluated (and published) on one 8-task suite file."""
    from coworkenv.pipeline.config import EvaluationConfig
    from coworkenv.pipeline.evaluation import evaluate
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


def evaluation_of(root: Path, release: str, model_dir: Path) -> str:
    """A published evaluation of the checkpoint in `model_dir` whose rows are those of evaluation `release` (another
    agent's): the promotion rule needs evaluations of a model at chosen levels (none, all, some tasks passed), which
    the tiny model cannot reach. Published as the evaluation pipeline publishes one of an `hf:` agent: the agent
    spec and the weights' digest in its config, the agent label in its rows."""
    import pyarrow as pa

    from coworkenv.data.publisher import publish_release
    from coworkenv.data.reader import read_manifest, read_table
    from coworkenv.models.verify import MODEL_SHA256, weights_digest

    manifest = read_manifest(root, release)
    tables = {name: read_table(root, release, name) for name in manifest.files}
    rows = tables["eval_results"]
    label = pa.array([f"hf:{model_dir.name}"] * rows.num_rows, pa.string())
    tables["eval_results"] = rows.set_column(rows.schema.get_field_index("agent"), "agent", label)
    config = {**manifest.config, "agent": f"hf:{model_dir}", MODEL_SHA256: weights_digest(model_dir)}
    run_id = f"{manifest.run_id}-of-{model_dir.parent.name}-{model_dir.name}"
    return publish_release(
        tables, data_root=root, run_id=run_id, parent=manifest.parent, config=config, kind="eval"
    ).release_id
