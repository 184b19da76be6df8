"""The DPO job on the tiny model: real TRL DPOTrainer steps on environment-graded pairs (the random agent's failing
trials against the oracle's), the chat template's rendering of multi-turn continuations, the assistant-only mask, the
checkpoint and its record, determinism on the CPU, and bad input."""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

import pytest

from coworkenv.errors import CoworkEnvError
from coworkenv.rollout import run_trials, trajectory_rows
from coworkenv.rollout.pairs import PairSet, preference_pairs
from coworkenv.train.checkpoint import read_training
from coworkenv.train.dpo import DPOJobConfig, assistant_only_collator, pair_tokens, train_dpo
from tests.support.suites import example_tasks

pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning")

TASKS = (
    "04_files_region_report",
    "07_chat_standup_blockers",
    "08_multi_turn_vendor_demo",
    "13_retrieval_contract_renewal",
)
"""Short prompts (under 700 tokens), one with a scripted user whose replies sit inside the continuations."""
LN2 = math.log(2)


@pytest.fixture(scope="module")
def pairs() -> PairSet:
    tasks = example_tasks(TASKS)
    rand = run_trials(tasks, "random", trials=2, runtime="none", workers=1)
    oracle = run_trials(tasks, "oracle", runtime="none", workers=1)
    found = preference_pairs(
        trajectory_rows(rand, tasks), tasks, oracle=trajectory_rows(oracle, tasks), min_score_gap=0.25, source="eval-x"
    )
    assert len(found.pairs) == len(TASKS)
    return found


@pytest.fixture(scope="module")
def tokenizer(tiny_model_dir):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny_model_dir, local_files_only=True)


def settings(model: Path, out: Path, **values) -> DPOJobConfig:
    base = {"max_steps": 3, "batch_size": 2, "max_length": 1024, "logging_steps": 1, "warmup_steps": 0, "use_cpu": True}
    return DPOJobConfig(model=str(model), release="eval-x", out=str(out), **{**base, **values})


def test_the_template_renders_a_continuation_after_its_prompt(pairs, tokenizer):
    """DPO needs prompt + continuation to render as the prompt (with the generation prompt) followed by the
    continuation's tokens; the assistant mask must cover the tool calls and answers, never tool results or user replies."""
    for pair, tokens in zip(pairs.pairs, pair_tokens(pairs, tokenizer), strict=True):
        tools = json.loads(pair.tools)
        prompt = tokenizer.apply_chat_template(
            pair.prompt, tools=tools, add_generation_prompt=True, tokenize=True, return_dict=True
        )["input_ids"]
        assert tokens["prompt_tokens"] == len(prompt)
        for side in ("chosen", "rejected"):
            ids = tokenizer.apply_chat_template(
                pair.prompt + getattr(pair, side), tools=tools, tokenize=True, return_dict=True
            )["input_ids"]
            mask = tokens[f"{side}_mask"]
            assert ids[: len(prompt)] == prompt and len(mask) == len(ids) and not any(mask[: len(prompt)])
            said = tokenizer.decode([t for t, m in zip(ids, mask, strict=True) if m], skip_special_tokens=False)
            heard = tokenizer.decode(
                [t for t, m in zip(ids[len(prompt) :], mask[len(prompt) :], strict=True) if not m],
                skip_special_tokens=False,
            )
            calls = sum(len(m["tool_calls"] or ()) for m in getattr(pair, side))
            assert said.count("<tool_call>") == calls and said.count("<|im_end|>") == sum(
                m["role"] == "assistant" for m in getattr(pair, side)
            )
            assert "<tool_response>" not in said and heard.count("<tool_response>") == sum(
                m["role"] == "tool" for m in getattr(pair, side)
            )
            for reply in (
                m["content"] for m in getattr(pair, side) if m["role"] == "user"
            ):  # the scripted user's turns
                assert reply in heard and reply not in said


def test_the_collator_keeps_only_assistant_tokens(pairs, tokenizer):
    from trl.data_utils import common_prefix_length

    pair, tokens = pairs.pairs[0], pair_tokens(pairs, tokenizer)[0]
    tools = json.loads(pair.tools)
    prompt = tokenizer.apply_chat_template(
        pair.prompt, tools=tools, add_generation_prompt=True, tokenize=True, return_dict=True
    )["input_ids"]
    full = {
        s: tokenizer.apply_chat_template(pair.prompt + getattr(pair, s), tools=tools, tokenize=True, return_dict=True)[
            "input_ids"
        ]
        for s in ("chosen", "rejected")
    }
    cut = min(common_prefix_length(prompt, full["chosen"]), common_prefix_length(prompt, full["rejected"]))
    example = {
        "prompt_ids": prompt[:cut],
        "chosen_ids": full["chosen"][cut:],
        "rejected_ids": full["rejected"][cut:],
        **tokens,
    }
    batch = assistant_only_collator(tokenizer.pad_token_id, 4096)([example])
    kept = batch["completion_mask"].sum(dim=1).tolist()
    assert kept == [sum(tokens["chosen_mask"]), sum(tokens["rejected_mask"])]
    assert kept[0] < len(example["chosen_ids"]) and kept[1] < len(
        example["rejected_ids"]
    )  # tool results were there, and dropped
    short = assistant_only_collator(tokenizer.pad_token_id, cut + 5)(
        [example]
    )  # truncated: the mask is cut with the tokens
    assert short["completion_mask"].shape[1] == cut + 5 and short["completion_mask"].sum().item() <= 10


@pytest.mark.slow
def test_dpo_trains_and_saves_its_checkpoint(pairs, tiny_model_dir, tmp_path):
    import torch
    from safetensors.torch import load_file

    out = tmp_path / "ckpt"
    steps: list[int] = []
    record = train_dpo(settings(tiny_model_dir, out), pairs=pairs, progress=steps.append)
    assert steps == [1, 1, 1] and record == read_training(out)
    assert (record["job"], record["steps"], record["pairs"], record["oracle_chosen"], record["release_id"]) == (
        "dpo",
        3,
        4,
        4,
        "eval-x",
    )
    assert (
        record["mean_gap"] == pytest.approx(pairs.mean_gap)
        and record["config"]["beta"] == 0.1
        and record["trained_pairs"] == 4
    )
    history = [e for e in record["log_history"] if "loss" in e]
    assert len(history) == 3 and all(math.isfinite(e["loss"]) for e in history)
    # before the first update the policy is the reference: every log-ratio is 0, the loss exactly ln 2
    assert history[0]["loss"] == pytest.approx(LN2, abs=1e-6) and history[0]["rewards/margins"] == pytest.approx(
        0, abs=1e-6
    )
    assert (
        history[-1]["loss"] < LN2 and record["last_reward_margin"] > 0
    )  # the updates moved the policy toward the chosen side
    assert (out / "curves.png").read_bytes().startswith(b"\x89PNG") and not (out / "trainer").exists()
    assert {"config.json", "model.safetensors", "tokenizer.json", "chat_template.jinja"} <= {
        p.name for p in out.iterdir()
    }
    trained, base = load_file(out / "model.safetensors"), load_file(tiny_model_dir / "model.safetensors")
    assert trained.keys() == base.keys() and any(not torch.equal(trained[k], base[k]) for k in base)


@pytest.mark.slow
def test_same_settings_same_checkpoint_on_the_cpu(pairs, tiny_model_dir, tmp_path):
    """Also the other mask: every continuation token (tool results and user replies too) in the log-probabilities."""

    def weights(out: Path) -> str:
        record = train_dpo(settings(tiny_model_dir, out, max_steps=2, assistant_only_loss=False), pairs=pairs)
        assert record["config"]["assistant_only_loss"] is False
        return hashlib.sha256((out / "model.safetensors").read_bytes()).hexdigest()

    assert weights(tmp_path / "a") == weights(tmp_path / "b")


def test_bad_input_is_refused_before_training(pairs, tiny_model_dir, tmp_path):
    from tests.support.suites import publish_task_release

    with pytest.raises(CoworkEnvError, match="not a model checkpoint"):
        train_dpo(settings(tmp_path / "no-model", tmp_path / "o1"), pairs=pairs)
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    with pytest.raises(CoworkEnvError, match="not an empty folder"):
        train_dpo(settings(tiny_model_dir, tmp_path / "full"), pairs=pairs)
    empty = PairSet(source="eval-y", pairs=(), tasks=3, skipped={"all_passed": 3})
    with pytest.raises(
        CoworkEnvError, match=r"evaluation eval-y: no preference pairs from its 3 task\(s\) \(all_passed 3\)"
    ):
        train_dpo(settings(tiny_model_dir, tmp_path / "o2"), pairs=empty)
    with pytest.raises(CoworkEnvError, match="every prompt is at least max_length 64"):
        train_dpo(settings(tiny_model_dir, tmp_path / "o3", max_length=64), pairs=pairs)
    training = publish_task_release(tmp_path / "data", example_tasks(TASKS[:1]))
    with pytest.raises(CoworkEnvError, match="is a tasks release"):  # without pairs: the release must be an evaluation
        train_dpo(
            DPOJobConfig(model=str(tiny_model_dir), release=training.release_id, out=str(tmp_path / "o4")),
            tmp_path / "data",
        )
    assert not any((tmp_path / name).exists() for name in ("o1", "o2", "o3", "o4"))
