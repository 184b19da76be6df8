"""The offline tiny model: what it holds, that transformers reloads it as it was built, its chat template, its
determinism, and `coworkenv model tiny` through the real console script."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from coworkenv.errors import CoworkEnvError
from coworkenv.train.tiny import CARD, TinyConfig, build_tiny_model, read_card
from tests.support import EXAMPLES, ROOT
from tests.support.processes import tree_digests

CLI = Path(sys.executable).parent / "coworkenv"
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
FILES = {
    "chat_template.jinja",
    "config.json",
    CARD,
    "generation_config.json",
    "model.safetensors",
    "tokenizer.json",
    "tokenizer_config.json",
}
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "files_read",
            "description": "Read a file.",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
        },
    }
]
CONVERSATION = [
    {"role": "system", "content": "You are a coworker agent."},
    {"role": "user", "content": "Read notes.txt and summarise it."},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "files_read", "arguments": '{"path": "notes.txt"}'},
            },
            {"id": "call_2", "type": "function", "function": {"name": "files_read", "arguments": {"path": "b.txt"}}},
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": '{"content": "ship friday"}'},
    {"role": "tool", "tool_call_id": "call_2", "content": '{"error": {"code": 404, "message": "no such file"}}'},
    {"role": "assistant", "content": "It says: ship friday."},
]


def load(path: Path):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    return AutoTokenizer.from_pretrained(path, local_files_only=True), AutoModelForCausalLM.from_pretrained(
        path, local_files_only=True
    )


def test_the_model_is_small_and_described_by_its_card(tiny_model_dir: Path) -> None:
    assert {p.name for p in tiny_model_dir.iterdir()} == FILES
    assert all(p.stat().st_mode & 0o044 == 0o044 for p in tiny_model_dir.iterdir())  # readable by every user
    card = read_card(tiny_model_dir)
    assert card["seed"] == 0 and card["config"] == TinyConfig().model_dump()
    assert 100_000 <= card["parameters"] <= 1_000_000
    assert card["corpus"]["documents"] > 100 and card["corpus"]["characters"] > 100_000
    config = json.loads((tiny_model_dir / "config.json").read_text())
    assert config["model_type"] == "qwen2" and config["architectures"] == ["Qwen2ForCausalLM"]
    generation = json.loads((tiny_model_dir / "generation_config.json").read_text())
    assert generation["do_sample"] is False and generation["max_new_tokens"] == card["config"]["max_new_tokens"]


def test_transformers_reloads_it_with_the_same_ids(tiny_model_dir: Path) -> None:
    import torch
    from tokenizers import Tokenizer

    from coworkenv.episode.runner import initial_messages
    from coworkenv.spec.io import load_task
    from coworkenv.workspace.tools import tool_schemas

    tokenizer, model = load(tiny_model_dir)
    raw = Tokenizer.from_file(str(tiny_model_dir / "tokenizer.json"))
    spec = load_task(EXAMPLES / "01_mail_forward_invoices.json")
    messages, tools = initial_messages(spec), tool_schemas(spec.tools)
    text = tokenizer.apply_chat_template(messages, tools=tools, add_generation_prompt=True, tokenize=False)
    ids = tokenizer.apply_chat_template(messages, tools=tools, add_generation_prompt=True, tokenize=True)["input_ids"]
    assert ids == raw.encode(text).ids
    assert len(ids) < len(text) / 3  # trained on these prompts: tool schemas take few tokens
    assert tokenizer.decode(ids) == text
    assert model.config.vocab_size == len(tokenizer) == card_vocab(tiny_model_dir)
    with torch.no_grad():
        logits = model(torch.tensor([ids[:64]])).logits
    assert logits.shape == (1, 64, len(tokenizer)) and torch.isfinite(logits).all()


def card_vocab(path: Path) -> int:
    return read_card(path)["vocab_size"]


def test_control_tokens_are_single_ids_and_tags_survive_decoding(tiny_model_dir: Path) -> None:
    tokenizer, _ = load(tiny_model_dir)
    for token in (
        "<|im_start|>",
        "<|im_end|>",
        "<|endoftext|>",
        "<|pad|>",
        "<tool_call>",
        "</tool_call>",
        "<tool_response>",
    ):
        assert tokenizer(token, add_special_tokens=False)["input_ids"] == [tokenizer.convert_tokens_to_ids(token)]
    assert tokenizer.eos_token == "<|im_end|>" and tokenizer.pad_token == "<|pad|>"
    assert tokenizer.pad_token_id != tokenizer.eos_token_id
    ids = tokenizer('<tool_call>{"name": "x"}</tool_call><|im_end|>', add_special_tokens=False)["input_ids"]
    assert tokenizer.decode(ids, skip_special_tokens=True) == '<tool_call>{"name": "x"}</tool_call>'


def test_the_chat_template_renders_tools_calls_and_results(tiny_model_dir: Path) -> None:
    tokenizer, _ = load(tiny_model_dir)
    text = tokenizer.apply_chat_template(CONVERSATION, tools=TOOLS, tokenize=False)
    assert text.startswith("<|im_start|>system\nYou are a coworker agent.\n\n# Tools\n")
    assert "\n<tools>\n- files_read(path: string): Read a file.\n</tools><|im_end|>\n" in text
    assert (
        '<|im_start|>assistant\n<tool_call>{"name": "files_read", "arguments": {"path": "notes.txt"}}</tool_call>\n'
        '<tool_call>{"name": "files_read", "arguments": {"path": "b.txt"}}</tool_call><|im_end|>\n'
    ) in text
    assert (
        '<|im_start|>user\n<tool_response>\n{"content": "ship friday"}\n</tool_response><|im_end|>\n<|im_start|>user\n'
        '<tool_response>\n{"error": {"code": 404, "message": "no such file"}}\n</tool_response><|im_end|>\n'
    ) in text
    assert text.endswith("<|im_start|>assistant\nIt says: ship friday.<|im_end|>\n")
    prompt = tokenizer.apply_chat_template(CONVERSATION[:2], tools=TOOLS, add_generation_prompt=True, tokenize=False)
    assert prompt.endswith("<|im_start|>user\nRead notes.txt and summarise it.<|im_end|>\n<|im_start|>assistant\n")
    for n in range(1, len(CONVERSATION)):  # appending a message never changes how earlier ones render
        shorter = tokenizer.apply_chat_template(CONVERSATION[:n], tools=TOOLS, tokenize=False)
        assert text.startswith(shorter)
    no_tools = tokenizer.apply_chat_template(
        [{"role": "user", "content": "hi"}], add_generation_prompt=True, tokenize=False
    )
    assert no_tools == "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"


def test_assistant_masks_cover_exactly_the_assistant_output(tiny_model_dir: Path) -> None:
    tokenizer, _ = load(tiny_model_dir)
    out = tokenizer.apply_chat_template(
        CONVERSATION, tools=TOOLS, tokenize=True, return_dict=True, return_assistant_tokens_mask=True
    )
    masked = tokenizer.decode([i for i, keep in zip(out["input_ids"], out["assistant_masks"], strict=True) if keep])
    assert masked == (
        '<tool_call>{"name": "files_read", "arguments": {"path": "notes.txt"}}</tool_call>\n'
        '<tool_call>{"name": "files_read", "arguments": {"path": "b.txt"}}</tool_call><|im_end|>'
        "It says: ship friday.<|im_end|>"
    )


def test_a_different_seed_changes_the_weights_not_the_tokenizer(tiny_model_dir: Path, tmp_path: Path) -> None:
    other = tree_digests(build_tiny_model(tmp_path / "tiny", seed=1))
    same = tree_digests(tiny_model_dir)
    assert other["model.safetensors"] != same["model.safetensors"]
    for name in ("tokenizer.json", "tokenizer_config.json", "chat_template.jinja"):
        assert other[name] == same[name]
    assert tree_digests(build_tiny_model(tmp_path / "tiny", seed=0, force=True)) == same  # --force replaces it whole


def test_a_non_empty_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("mine")
    with pytest.raises(CoworkEnvError, match="not empty"):
        build_tiny_model(tmp_path)
    with pytest.raises(CoworkEnvError, match="not a model folder"):  # --force replaces a model, not a data root, say
        build_tiny_model(tmp_path, force=True)
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]


def cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    assert CLI.exists(), f"console script not found next to the interpreter: {CLI}"
    return subprocess.run(
        [str(CLI), *map(str, args)], capture_output=True, text=True, env=ENV, cwd=ROOT, timeout=300, check=False
    )


@pytest.mark.slow
def test_the_cli_builds_the_same_files_in_another_process(tiny_model_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "tiny"
    proc = cli("model", "tiny", "--out", out)
    assert proc.returncode == 0, proc.stderr
    assert "parameters:" in proc.stdout and "vocab:" in proc.stdout and "model.safetensors" in proc.stdout
    assert tree_digests(out) == tree_digests(tiny_model_dir)  # another process, another hash seed: same bytes

    again = cli("model", "tiny", "--out", out)
    assert again.returncode == 2 and again.stdout == ""
    assert again.stderr.startswith("error: ") and "not empty" in again.stderr and again.stderr.count("\n") == 1
    assert tree_digests(out) == tree_digests(tiny_model_dir)
