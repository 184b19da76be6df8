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
    proc = cli(
        "train", "sft", "--model", tiny_model_dir, "--out", tmp_path / "o2", "--max-steps", "0", data_root=home / "data"
    )
    assert_one_line_error(proc, "--max-steps")
    proc = cli(
        "train",
        "sft",
        "--model",
        tiny_model_dir,
        "--out",
        tmp_path / "o2",
        "--seed",
        str(2**32),
        data_root=home / "data",
    )
    assert_one_line_error(proc, "--seed", "less than or equal to 4294967295")  # numpy's limit, which set_seed reaches
    proc = cli(
        "train",
        "sft",
        "--model",
        tiny_model_dir,
        "--out",
        tmp_path / "o3",
        "--release",
        "r-nope",
        data_root=home / "data",
    )
    assert_one_line_error(proc, "r-nope")
    assert_one_line_error(cli("train", "sft", "--out", tmp_path / "o4", data_root=home / "data"), "--model is required")
    (tmp_path / "job.yaml").write_text(f"out: {tmp_path / 'o5'}\n", encoding="utf-8")
    proc = cli("train", "sft", "--config", tmp_path / "job.yaml", data_root=home / "data")
    assert_one_line_error(proc, f"--model is required (an option, or a field of {tmp_path / 'job.yaml'})")
    assert (
        "--model" in (usage := ok(cli("train", "sft", "--help", data_root=home / "data")))
        and "PydanticUndefined" not in usage
    )


def test_lora_packing_and_snapshots_give_whole_checkpoints_with_their_fit(home, tiny_model_dir):
    """LoRA (rank 4) on packed rows in bfloat16 autocast, long conversations dropped: the checkpoint and its snapshot
    are whole models that load without peft, changed from the base, and the record says what fitted."""
    import torch
    from safetensors.torch import load_file

    from coworkenv.train.checkpoint import read_training

    out = home / "lora"
    printed = ok(
        cli(
            "train",
            "sft",
            "--model",
            tiny_model_dir,
            "--release",
            "latest",
            "--out",
            out,
            "--max-steps",
            "4",
            "--batch-size",
            "1",
            "--max-length",
            "1024",
            "--logging-steps",
            "1",
            "--use-cpu",
            "--lora-rank",
            "4",
            "--packing",
            "--bf16",
            "--long-conversations",
            "drop",
            "--snapshot-steps",
            "2",
            "--learning-rate",
            "1e-2",
            data_root=home / "data",
        )
    )
    record = read_training(out)
    fit = record["fit"]
    assert fit["shortened"] == 0 and fit["whole"] + fit["dropped"] == 8 and fit["max_length"] == 1024
    assert (
        f"{fit['whole']} of 8 conversations fit 1,024 tokens" in printed
        and record["tokens"] > 0
        and record["tokens_per_s"] > 0
    )
    for folder in (out, out / "snapshots" / "step-2"):
        assert not list(folder.glob("adapter_*")) and (folder / "tokenizer.json").is_file()
        weights = load_file(folder / "model.safetensors")
        assert not any("lora" in name for name in weights)
        base = load_file(tiny_model_dir / "model.safetensors")
        assert any(
            not torch.equal(weights[name], base[name]) for name in base
        )  # merged: the adapters changed the weights
    assert '"step": 2' in (out / "snapshots" / "step-2" / "snapshot.json").read_text()


def test_a_model_whose_template_cannot_mark_assistant_tokens_is_refused_in_one_line(home, tiny_model_dir, tmp_path):
    import shutil

    model = tmp_path / "plain"
    shutil.copytree(tiny_model_dir, model)
    (model / "chat_template.jinja").write_text("{% for m in messages %}{{ m.content }}{% endfor %}", encoding="utf-8")
    proc = cli(
        "train",
        "sft",
        "--model",
        model,
        "--release",
        "latest",
        "--out",
        tmp_path / "o",
        *STEPS,
        data_root=home / "data",
    )
    assert_one_line_error(proc, "does not mark assistant tokens")
