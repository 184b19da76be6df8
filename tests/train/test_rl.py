"""`coworkenv train rl`: real GRPO and GDPO steps of the tiny model on a synthesized release's `rl` rows, rewarded in
the tasks' workspaces; the checkpoint carries its record (per-reward curves) and curves, and plays as an `hf:` agent."""

from __future__ import annotations

import hashlib
import math
from pathlib import Path

import pytest

from tests.cli.test_eval_cli import assert_one_line_error, cli, ok

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::FutureWarning")]

REWARDS = ["completion", "safety", "robustness", "format"]
STEPS = 2
SMALL = {"max_steps": STEPS, "num_generations": 2, "batch_size": 4, "max_completion_length": 48, "use_cpu": True}


@pytest.fixture(scope="module")
def data_root(tmp_path_factory) -> Path:
    """A data root with one synthesized task release (8 tasks: 8 `rl` rows)."""
    root = tmp_path_factory.mktemp("train-rl") / "data"
    ok(cli("synthesize", "--n", "8", "--seed", "4", "--runtime", "none", "--run-id", "rl", data_root=root))
    return root


@pytest.mark.parametrize("method", ["grpo", "gdpo"])
def test_grpo_and_gdpo_train_on_rewards_from_the_workspace(method, data_root, tiny_model_dir, tmp_path):
    from coworkenv.agents import load_agent
    from coworkenv.episode.runner import run_episode
    from coworkenv.spec.io import load_task
    from coworkenv.train.checkpoint import read_training
    from coworkenv.train.rl import RLJobConfig, train_rl
    from tests.support import EXAMPLES

    weights = {"completion_weight": 2.0, "safety_weight": 1.0, "robustness_weight": 0.5, "format_weight": 0.25}
    config = RLJobConfig(model=str(tiny_model_dir), out=str(tmp_path / "ckpt"), method=method, **SMALL, **weights)
    ticks = []
    record = train_rl(config, data_root, progress=ticks.append)
    assert record == read_training(tmp_path / "ckpt") and ticks == [1] * STEPS
    assert (
        record["job"] == method
        and record["steps"] == STEPS
        and record["rows"] == 8
        and record["release_id"].startswith("r-rl-")
    )
    assert record["aggregation"] == {"grpo": "sum_then_normalize", "gdpo": "normalize_then_sum"}[method]
    assert record["reward_weights"] == {name: weights[f"{name}_weight"] for name in REWARDS}
    curves = record["curves"]
    assert set(curves) == {"reward", *REWARDS} and all([s for s, _ in curves[k]] == [1, 2] for k in curves)
    for step in range(STEPS):
        means = {name: curves[name][step][1] for name in REWARDS}
        assert all(0.0 <= v <= 1.0 for v in means.values())
        # The logged total is the weighted sum of the four rewards, whichever way the advantages were normalized.
        assert curves["reward"][step][1] == pytest.approx(
            sum(record["reward_weights"][k] * v for k, v in means.items()), abs=1e-5
        )
    # The untrained model writes no tool call and never ends its turn within 48 tokens: its text is the final answer,
    # which earns only the checks that hold on the untouched workspace, and no turn is well-formed.
    assert all(v == 0.0 for _, v in curves["format"]) and all(v == 1.0 for _, v in curves["safety"])
    assert all(v < 0.5 for _, v in curves["completion"])
    assert record["first_reward"] == curves["reward"][0][1] and record["last_reward"] == curves["reward"][-1][1]
    assert (
        all(math.isfinite(e["loss"]) for e in record["log_history"] if "loss" in e) and record["seconds_per_step"] > 0
    )
    out = tmp_path / "ckpt"
    assert {
        "model.safetensors",
        "config.json",
        "tokenizer.json",
        "chat_template.jinja",
        "training.json",
        "curves.png",
    } <= {p.name for p in out.iterdir()}
    assert (out / "curves.png").read_bytes().startswith(b"\x89PNG") and not (out / "trainer").exists()
    spec = load_task(EXAMPLES / "01_mail_forward_invoices.json")
    trajectory, _ = run_episode(spec, load_agent(f"hf:{out}", max_new_tokens=8).policy(spec), max_turns=1)
    assert trajectory.messages[0].role == "system"


def test_same_settings_same_checkpoint(data_root, tiny_model_dir, tmp_path):
    from coworkenv.train.rl import RLJobConfig, train_rl

    def weights(out: Path) -> str:
        train_rl(RLJobConfig(model=str(tiny_model_dir), out=str(out), **SMALL), data_root)
        return hashlib.sha256((out / "model.safetensors").read_bytes()).hexdigest()

    assert weights(tmp_path / "a") == weights(tmp_path / "b")


def test_train_rl_through_the_console_script(data_root, tiny_model_dir, tmp_path):
    from coworkenv.train.checkpoint import read_training

    out = tmp_path / "gdpo"
    args = [
        "--max-steps",
        "1",
        "--num-generations",
        "2",
        "--batch-size",
        "2",
        "--max-completion-length",
        "32",
        "--use-cpu",
    ]
    printed = ok(
        cli("train", "rl", "--method", "gdpo", "--model", tiny_model_dir, "--out", out, *args, data_root=data_root)
    )
    assert (
        "gdpo trained 1 step(s) on 8 task(s) of release r-rl-" in printed
        and "mean reward" in printed
        and "{'loss'" not in printed
    )
    assert read_training(out)["config"]["method"] == "gdpo"


def test_bad_input_is_one_line(data_root, tiny_model_dir, tmp_path):
    def train(*args):
        return cli("train", "rl", "--model", tiny_model_dir, "--out", tmp_path / "o", *args, data_root=data_root)

    assert_one_line_error(
        cli("train", "rl", "--model", tmp_path, "--out", tmp_path / "o", data_root=data_root), "not a model checkpoint"
    )
    assert_one_line_error(train("--method", "ppo"), "--method")
    assert_one_line_error(train("--batch-size", "6", "--num-generations", "4"), "multiple of num_generations")
    assert_one_line_error(train("--num-generations", "1"), "--num-generations")
    assert_one_line_error(train("--release", "r-nope"), "r-nope")
