"""A model folder is untrusted input (docs/design/training.md, "Models"): before the registry copies one in, its files
are read the way the loaders will read them and refused, in one line, unless they make the model its config
describes. `check_model_dir` (the training jobs' early check) has made sure that nothing in it leads out of it.

- every JSON file: a regular file of strict JSON (no NaN, no lone surrogates, bounded depth);
- config: transformers knows the architecture, and it is a causal LM (built on the meta device: no memory, no time);
  its `architectures` are transformers classes; its special token ids (and the generation config's) are in the vocabulary;
- weights: safetensors only (a pickled `.bin` runs code when it is loaded); every tensor the model has is there with
  the config's shape (tied ones may be left out), nothing else is, and every value is finite;
- tokenizer: it loads, its ids fit the embedding (the added tokens' too), `model_max_length` is a positive integer,
  and its chat template renders a tool call.

The cost is one read of the weights (about a second for SmolLM2's 540 MB); registering reads them twice more, for
the copy and for `weights_digest`.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from coworkenv.errors import CoworkEnvError, first_line
from coworkenv.fileio import read_json
from coworkenv.train.checkpoint import check_chat_template, check_model_dir

MODEL_SHA256 = "model_sha256"
"""The key of an evaluation release's config that holds the `weights_digest` of the checkpoint it ran (`hf:` agents)."""


def verify_model_dir(path: Path) -> None:
    """Refuse (one `CoworkEnvError` line naming the folder) a folder whose files do not make a working model."""
    check_model_dir(path)
    documents = _json_files(path)
    model = _meta_model(path)
    expected = {name: tuple(t.shape) for name, t in model.state_dict().items()}
    _check_weights(path, expected, _tied(model))
    _check_ids(path, documents, model.config.vocab_size)
    _check_tokenizer(path, model.config)


SPECIAL_IDS = ("bos_token_id", "eos_token_id", "pad_token_id", "decoder_start_token_id")


def _json_files(path: Path) -> dict[str, Any]:
    """Every `*.json` in the folder, parsed strictly: a directory, NaN or a lone surrogate where the loaders expect a
    file of JSON would otherwise be skipped or read as something else."""
    documents: dict[str, Any] = {}
    for file in sorted(path.glob("*.json")):
        if not file.is_file():
            raise CoworkEnvError(f"{file}: not a file")
        documents[file.name] = read_json(file)
    if not isinstance(documents.get("config.json"), dict):
        raise CoworkEnvError(f"{path}: config.json is missing or not a JSON object")
    return documents


def _check_ids(path: Path, documents: dict[str, Any], vocab: int) -> None:
    """Names and numbers the loaders take on trust: `architectures` must be transformers classes, special token ids and
    the added tokens' ids must be in the vocabulary, and `model_max_length` a positive integer."""
    import transformers

    config = documents["config.json"]
    names = config.get("architectures") or []
    if not isinstance(names, list) or not all(
        isinstance(n, str) and n.isidentifier() and hasattr(transformers, n) for n in names
    ):
        raise CoworkEnvError(f"{path}: config.json `architectures` names no transformers class: {str(names)[:100]}")

    def check_id(value: Any, where: str) -> None:
        for one in value if isinstance(value, list) else [value]:
            if one is not None and (type(one) is not int or not 0 <= one < vocab):
                raise CoworkEnvError(
                    f"{path}: {where} is {str(one)[:40]}, not a token id below the vocabulary size {vocab}"
                )

    def object_of(file: str) -> dict[str, Any]:  # a file that is absent or not an object has nothing to check here
        document = documents.get(file)
        return document if isinstance(document, dict) else {}

    for file in ("config.json", "generation_config.json"):
        for key in SPECIAL_IDS:
            check_id(object_of(file).get(key), f"{file} `{key}`")
    added = object_of("tokenizer.json").get("added_tokens")
    for i, token in enumerate(added if isinstance(added, list) else []):
        check_id(token.get("id") if isinstance(token, dict) else token, f"tokenizer.json `added_tokens[{i}].id`")
    limit = object_of("tokenizer_config.json").get("model_max_length")
    if limit is not None and (type(limit) is not int or limit < 1):
        raise CoworkEnvError(
            f"{path}: tokenizer_config.json `model_max_length` is {str(limit)[:40]}, not a positive integer"
        )


def weights_digest(path: Path) -> str:
    """SHA-256 over the folder's safetensors files (names and contents, in name order): which model a folder holds,
    whatever folder it is in. An evaluation records it of the checkpoint it ran; the registry of each version."""
    digest = hashlib.sha256()
    for file in sorted(Path(path).glob("*.safetensors")):
        inner = hashlib.sha256()
        with file.open("rb") as f:
            while chunk := f.read(8 << 20):
                inner.update(chunk)
        digest.update(f"{file.name}\0{inner.hexdigest()}\n".encode())
    return digest.hexdigest()


def _meta_model(path: Path) -> Any:
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    from coworkenv.agents.hf import quiet_transformers

    try:
        with quiet_transformers():
            config = AutoConfig.from_pretrained(path, local_files_only=True)
            with torch.device("meta"):
                return AutoModelForCausalLM.from_config(config)
    except Exception as exc:  # noqa: BLE001 — an unknown architecture, a config that is not a causal LM, impossible sizes
        raise CoworkEnvError(
            f"{path}: config.json does not describe a causal LM transformers can build: {first_line(exc)[:300]}"
        ) from None


def _tied(model: Any) -> set[str]:
    """Parameters that share another's storage when the model is built (the output embedding, usually): a file may omit them."""
    keys = getattr(model, "_tied_weights_keys", None) or []
    return set(keys) if getattr(model.config, "tie_word_embeddings", False) else set()


def _check_weights(path: Path, expected: dict[str, tuple[int, ...]], tied: set[str]) -> None:
    if any(path.glob("pytorch_model*.bin")) and not any(path.glob("*.safetensors")):
        raise CoworkEnvError(
            f"{path}: weights are pickled (pytorch_model*.bin), which runs code when loaded; save them as safetensors"
        )
    found: dict[str, tuple[int, ...]] = {}
    for file in sorted(path.glob("*.safetensors")):
        found.update(_tensors(file))
    unknown = sorted(set(found) - set(expected))
    if unknown:
        raise CoworkEnvError(
            f"{path}: weights hold {len(unknown)} tensors the config's model does not have ({unknown[0]}, …)"
        )
    missing = sorted(set(expected) - set(found) - tied)
    if missing:
        raise CoworkEnvError(f"{path}: weights lack {len(missing)} of the model's tensors ({missing[0]}, …)")
    for name, shape in found.items():
        if shape != expected[name]:
            raise CoworkEnvError(
                f"{path}: tensor {name} has shape {list(shape)}, the config's model {list(expected[name])}"
            )


def _tensors(file: Path) -> dict[str, tuple[int, ...]]:
    """Name → shape of every tensor in the file, each read once and checked to be finite."""
    import torch
    from safetensors import safe_open

    shapes: dict[str, tuple[int, ...]] = {}
    try:
        with safe_open(str(file), framework="pt") as tensors:
            for name in tensors.keys():  # noqa: SIM118 — safe_open is not a mapping
                tensor = tensors.get_tensor(name)
                if tensor.is_floating_point() and not bool(torch.isfinite(tensor).all()):
                    raise CoworkEnvError(f"{file}: tensor {name} holds NaN or infinite values")
                shapes[name] = tuple(tensor.shape)
    except CoworkEnvError:
        raise
    except Exception as exc:  # noqa: BLE001 — a header that does not parse, data shorter than the header says
        raise CoworkEnvError(f"{file}: not a readable safetensors file: {first_line(exc)[:300]}") from None
    return shapes


def _check_tokenizer(path: Path, config: Any) -> None:
    from transformers import AutoTokenizer

    from coworkenv.agents.hf import quiet_transformers

    try:
        with quiet_transformers():
            tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
    except Exception as exc:  # noqa: BLE001 — damaged tokenizer.json, a bad tokenizer_config.json
        raise CoworkEnvError(f"{path}: the tokenizer does not load: {first_line(exc)[:300]}") from None
    vocab = getattr(config, "vocab_size", None)
    if isinstance(vocab, int) and len(tokenizer) > vocab:
        raise CoworkEnvError(f"{path}: the tokenizer has {len(tokenizer)} tokens, the model's embedding {vocab}")
    check_chat_template(tokenizer, path, assistant_mask=False)
