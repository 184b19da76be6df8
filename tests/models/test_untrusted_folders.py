"""A model folder is untrusted input: the registry (and `nightly --base-model`, which registers through it) refuses
every damaged copy of the tiny model in one line, copies nothing, and takes the intact one."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from coworkenv.errors import CoworkEnvError
from coworkenv.models import list_models, register_model

WEIGHTS = "model.safetensors"


def _flip(path: Path, at: int) -> None:
    data = bytearray(path.read_bytes())
    data[at] ^= 0xFF
    data[at + 1] ^= 0xFF
    path.write_bytes(bytes(data))


def _json(path: Path, change: Callable[[dict], None]) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data), encoding="utf-8")


def _nan_weights(d: Path) -> None:
    import torch
    from safetensors.torch import load_file, save_file

    tensors = load_file(d / WEIGHTS)
    name = next(iter(tensors))
    tensors[name] = tensors[name].clone()
    tensors[name].view(-1)[0] = float("nan")
    save_file(tensors, d / WEIGHTS, metadata={"format": "pt"})
    assert torch.isnan(load_file(d / WEIGHTS)[name]).any()


def _drop_tensor(d: Path) -> None:
    from safetensors.torch import load_file, save_file

    tensors = load_file(d / WEIGHTS)
    tensors.pop(sorted(tensors)[-1])
    save_file(tensors, d / WEIGHTS, metadata={"format": "pt"})


def _no_template(d: Path) -> None:
    _json(d / "tokenizer_config.json", lambda c: c.pop("chat_template", None))
    for f in d.glob("chat_template*"):
        f.unlink()


def _template(text: str) -> Callable[[Path], None]:
    def change(d: Path) -> None:
        _json(d / "tokenizer_config.json", lambda c: c.pop("chat_template", None))
        (d / "chat_template.jinja").write_text(text, encoding="utf-8")

    return change


DAMAGE: dict[str, tuple[Callable[[Path], None], str]] = {
    "weights a link to /etc/passwd": (
        lambda d: ((d / WEIGHTS).unlink(), (d / WEIGHTS).symlink_to("/etc/passwd")),
        "leads out of the folder",
    ),
    "tokenizer a link outside": (
        lambda d: ((d / "tokenizer.json").unlink(), (d / "tokenizer.json").symlink_to(d.parent / "elsewhere.json")),
        "leads out of the folder",
    ),
    "garbage weights": (lambda d: (d / WEIGHTS).write_bytes(b"\x00garbage" * 100), "not a readable safetensors file"),
    "truncated weights": (
        lambda d: (d / WEIGHTS).write_bytes((d / WEIGHTS).read_bytes()[:-1000]),
        "not a readable safetensors file",
    ),
    "header bytes flipped": (lambda d: _flip(d / WEIGHTS, 12), "not a readable safetensors file"),
    "NaN in the weights": (_nan_weights, "NaN or infinite"),
    "a tensor missing": (_drop_tensor, "lack"),
    "config of another size": (
        lambda d: _json(d / "config.json", lambda c: c.update(hidden_size=c["hidden_size"] * 2)),
        "shape",
    ),
    "bogus architecture": (
        lambda d: _json(d / "config.json", lambda c: c.update(model_type="no_such_arch")),
        "config.json",
    ),
    "another architecture's config": (
        lambda d: _json(d / "config.json", lambda c: c.update(model_type="bert")),
        "weights hold",
    ),
    "pickled weights only": (lambda d: (d / WEIGHTS).rename(d / "pytorch_model.bin"), "pickled"),
    "tokenizer garbage": (lambda d: (d / "tokenizer.json").write_text("{not json", encoding="utf-8"), "tokenizer"),
    "tokenizer larger than the embedding": (
        lambda d: _json(d / "config.json", lambda c: c.update(vocab_size=8)),
        "shape",
    ),
    "an end-of-text id past the vocabulary": (
        lambda d: _json(d / "config.json", lambda c: c.update(eos_token_id=c["vocab_size"])),
        "not a token id",
    ),
    "a negative id in generation_config": (
        lambda d: _json(d / "generation_config.json", lambda c: c.update(pad_token_id=-1)),
        "not a token id",
    ),
    "an architecture that is no class": (
        lambda d: _json(d / "config.json", lambda c: c.update(architectures=["a\x00b"])),
        "no transformers class",
    ),
    "an added token's id out of range": (
        lambda d: _json(d / "tokenizer.json", lambda c: c["added_tokens"][0].update(id=-(2**63))),
        "not a token id",
    ),
    "model_max_length not an integer": (
        lambda d: _json(d / "tokenizer_config.json", lambda c: c.update(model_max_length=1.5)),
        "positive integer",
    ),
    "NaN in a JSON file": (
        lambda d: (d / "tokenizer_config.json").write_text('{"model_max_length": NaN}', encoding="utf-8"),
        "NaN",
    ),
    "a JSON file that is a folder": (
        lambda d: ((d / "generation_config.json").unlink(), (d / "generation_config.json").mkdir()),
        "not a file",
    ),
    "no chat template": (_no_template, "no chat template"),
    "broken chat template": (_template("{% for m in messages %}{{ m.content "), "cannot render a tool call"),
    "template without tools": (_template("{% for m in messages %}{{ m.content }}{% endfor %}"), "drops tool calls"),
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_the_registry_refuses_a_damaged_folder_and_copies_nothing(tiny_model_dir, tmp_path, damage):
    change, needle = DAMAGE[damage]
    folder = tmp_path / "model"
    shutil.copytree(tiny_model_dir, folder)
    (tmp_path / "elsewhere.json").write_text("{}", encoding="utf-8")
    change(folder)
    with pytest.raises(CoworkEnvError) as refused:
        register_model(folder, "m", data_root=tmp_path / "root")
    message = str(refused.value)
    assert needle in message and "\n" not in message and str(folder) in message
    assert not list_models(tmp_path / "root")
    assert not any((tmp_path / "root").rglob("*.safetensors"))


def test_the_intact_folder_is_registered(tiny_model_dir, tmp_path):
    entry = register_model(tiny_model_dir, "m", data_root=tmp_path / "root")
    assert entry.version == 1 and (Path(entry.path) / WEIGHTS).is_file()
