"""`coworkenv train sft` through the console script, as the README runs it: a synthesized release's `sft` rows train the
tiny model with TRL's SFTTrainer; the checkpoint carries its record and curves and plays as an `hf:` agent."""

from __future__ import annotations

import hashlib
import math
from pathlib import Path

import pytest

from tests.cli.test_eval_cli import assert_one_line_error, cli, ok

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::FutureWarning")]

STEPS = ["--max-steps", "6", "--batch-size", "2", "--max-length", "1024", "--logging-steps", "1", "--use-cpu"]


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    """A data root with one synthesized task release (8 tasks, their oracle trajectories as `sft` rows)."""
    home = tmp_path_factory.mktemp("train-sft")
    ok(cli("synthesize", "--n", "8", "--seed", "4", "--runtime", "none", "--run-id", "train", data_root=home / "data"))
    return home


def train(home: Path, model: Path, out: Path):
    return cli("train", "sft", "--model", model, "--release", "latest", "--out", out, *STEPS, data_root=home / "data")


def test_sft_trains_saves_its_record_and_the_checkpoint_plays(home, tiny_model_dir):
    from coworkenv.agents import load_agent
    from coworkenv.episode.runner import run_episode
    from coworkenv.spec.io import load_task
    from coworkenv.train.checkpoint import read_training
    from tests.support import EXAMPLES

    out = home / "ckpt"
    printed = ok(train(home, tiny_model_dir, out))
    assert "trained 6 step(s) on 8 conversation(s)" in printed and "{'loss'" not in printed
    record = read_training(out)
    assert record["job"] == "sft" and record["steps"] == 6 and record["rows"] == 8
    assert record["release_id"].startswith("r-train-") and record["config"]["model"] == str(tiny_model_dir)
    losses = [e["loss"] for e in record["log_history"] if "loss" in e]
    assert len(losses) == 6 and all(math.isfinite(x) for x in losses)
    assert losses[-1] < losses[0]  # 6 steps at 3e-3 on the same 8 conversations: the loss must come down
    assert (out / "curves.png").read_bytes().startswith(b"\x89PNG")
    assert not (out / "trainer").exists()
    spec = load_task(EXAMPLES / "01_mail_forward_invoices.json")
    agent = load_agent(f"hf:{out}", max_new_tokens=16)
    trajectory, _ = run_episode(spec, agent.policy(spec), max_turns=2)
    assert trajectory.messages[0].role == "system"


def test_same_settings_same_checkpoint(home, tiny_model_dir):
    def weights(out: Path) -> str:
        ok(train(home, tiny_model_dir, out))
        return hashlib.sha256((out / "model.safetensors").read_bytes()).hexdigest()

    assert weights(home / "a") == weights(home / "b")


def test_bad_input_is_one_line(home, tiny_model_dir, tmp_path):
    assert_one_line_error(train(home, tmp_path / "no-model", tmp_path / "o1"), "not a model checkpoint")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    assert_one_line_error(train(home, tiny_model_dir, tmp_path / "full"), "not an empty folder")
    proc = cli("train", "sft", "--model", tiny_model_dir, "--out", tmp_path / "o2", "--max-steps", "0", data_root=home / "data")
    assert_one_line_error(proc, "--max-steps")
    proc = cli("train", "sft", "--model", tiny_model_dir, "--out", tmp_path / "o2", "--seed", str(2**32), data_root=home / "data")
    assert_one_line_error(proc, "--seed", "less than or equal to 4294967295")  # numpy's limit, which set_seed reaches
    proc = cli("train", "sft", "--model", tiny_model_dir, "--out", tmp_path / "o3", "--release", "r-nope", data_root=home / "data")
    assert_one_line_error(proc, "r-nope")
    assert_one_line_error(cli("train", "sft", "--out", tmp_path / "o4", data_root=home / "data"), "--model is required")
    (tmp_path / "job.yaml").write_text(f"out: {tmp_path / 'o5'}\n", encoding="utf-8")
    proc = cli("train", "sft", "--config", tmp_path / "job.yaml", data_root=home / "data")
    assert_one_line_error(proc, f"--model is required (an option, or a field of {tmp_path / 'job.yaml'})")
    assert "--model" in (usage := ok(cli("train", "sft", "--help", data_root=home / "data"))) and "PydanticUndefined" not in usage
