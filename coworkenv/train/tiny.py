"""The tiny model (docs/design/training.md, "Models"): a small Qwen2-architecture causal LM built offline, random
weights, with a byte-level BPE tokenizer trained on the project's own prompts and a tool-capable chat template.

It knows nothing; it exists so that every CPU test, the demo and training runs have a real transformers model with
a real tokenizer and chat template. Building it is deterministic: the same seed gives byte-identical files.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from coworkenv.agents.hf import quiet_transformers
from coworkenv.errors import CoworkEnvError
from coworkenv.fileio import staged
from coworkenv.train.corpus import (
    CONTROL_TOKENS,
    EXAMPLES,
    TAG_TOKENS,
    chat_template,
    corpus_documents,
    without_control_tokens,
)

CARD = "coworkenv_model.json"
BUILDER = "coworkenv.train.tiny@1"


class TinyConfig(BaseModel):
    """The tiny model's shape and tokenizer; the defaults keep it well under a million parameters."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    vocab_size: int = Field(4096, ge=512, le=65536, description="Tokenizer vocabulary, special tokens included.")
    hidden_size: int = Field(64, ge=8, le=1024, description="Width of the residual stream.")
    intermediate_size: int = Field(128, ge=8, le=4096, description="Width of the MLP.")
    num_hidden_layers: int = Field(2, ge=1, le=24, description="Transformer blocks.")
    num_attention_heads: int = Field(4, ge=1, le=32, description="Query heads (must divide hidden_size).")
    num_key_value_heads: int = Field(2, ge=1, le=32, description="Key/value heads (must divide the query heads).")
    max_position_embeddings: int = Field(8192, ge=256, le=131072, description="Context length in tokens.")
    max_new_tokens: int = Field(64, ge=1, le=4096, description="Default generation length (generation_config.json).")


def _train_tokenizer(documents: list[str], vocab_size: int) -> Any:
    """A byte-level BPE with Qwen2's normalizer and pre-tokenizer, so `AutoTokenizer` reloads it with the same ids."""
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, normalizers, pre_tokenizers, trainers
    from tokenizers.models import BPE
    from transformers.models.qwen2.tokenization_qwen2 import PRETOKENIZE_REGEX

    tokenizer = Tokenizer(BPE(unk_token=None, fuse_unk=False, byte_fallback=False))
    tokenizer.normalizer = normalizers.NFC()
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(PRETOKENIZE_REGEX), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=2,
        special_tokens=[*CONTROL_TOKENS, *TAG_TOKENS],  # ids 0.. in this order
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(
        (without_control_tokens(d) for d in documents), trainer=trainer, length=len(documents)
    )
    tokenizer.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in CONTROL_TOKENS])
    # The tags are single tokens, but not "special": decoding keeps them, since the reply parser reads them.
    tokenizer.add_tokens([AddedToken(t, special=False, normalized=False) for t in TAG_TOKENS])
    return tokenizer


RESPONSE_TEMPLATE = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {"content": {"close_pattern": r"\s*(?:<\|im_end\|>|<\|endoftext\|>)", "content": "text"}},
}
"""How `transformers serve` reads a reply of this model: all of it as text. Its built-in Qwen template parses
`<tool_call>` blocks itself and answers HTTP 500 when one is not JSON — as a random model's mostly are — so the
client reads the calls instead (`agents/parsing.py`), and malformed ones become format errors of the turn."""


def _fast_tokenizer(tokenizer: Any, config: TinyConfig) -> Any:
    from transformers import PreTrainedTokenizerFast

    return PreTrainedTokenizerFast(
        response_template=RESPONSE_TEMPLATE,
        tokenizer_object=tokenizer,
        eos_token="<|im_end|>",
        pad_token="<|pad|>",
        unk_token=None,
        bos_token=None,
        extra_special_tokens=["<|im_start|>", "<|endoftext|>"],
        model_max_length=config.max_position_embeddings,
        chat_template=chat_template(),
        clean_up_tokenization_spaces=False,
    )


def _model(tokenizer: Any, config: TinyConfig, seed: int) -> Any:
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    eos = tokenizer.convert_tokens_to_ids(["<|im_end|>", "<|endoftext|>"])
    model_config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=config.hidden_size,
        intermediate_size=config.intermediate_size,
        num_hidden_layers=config.num_hidden_layers,
        num_attention_heads=config.num_attention_heads,
        num_key_value_heads=config.num_key_value_heads,
        max_position_embeddings=config.max_position_embeddings,
        tie_word_embeddings=False,  # tied, a random model echoes its last input token forever
        bos_token_id=None,
        eos_token_id=eos,
        pad_token_id=tokenizer.pad_token_id,
        dtype="float32",
    )
    with torch.random.fork_rng(devices=[]):  # seeded init without touching the caller's random state
        torch.manual_seed(seed)
        model = Qwen2ForCausalLM(model_config)
    model.eval()
    model.generation_config.update(
        do_sample=False,
        max_new_tokens=config.max_new_tokens,
        eos_token_id=eos,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=None,
        temperature=None,
        top_p=None,
        top_k=None,
    )
    return model


def _hash_documents(documents: list[str]) -> str:
    digest = hashlib.sha256()
    for document in documents:
        digest.update(hashlib.sha256(document.encode("utf-8")).digest())
    return digest.hexdigest()


def check_model_out(out: Path, force: bool) -> None:
    """Refuse, before any work, an `out` that a model build may not replace: a file, or a non-empty folder unless
    `force` — and even then only a folder that holds a model."""
    if out.exists() and not out.is_dir():
        raise CoworkEnvError(f"{out}: exists and is not a directory")
    if out.is_dir() and any(out.iterdir()):
        if not force:
            raise CoworkEnvError(f"{out}: not empty (use --force to replace it)")
        if not (out / "config.json").is_file():  # --force replaces a model; a mistyped --out (the data root) is kept
            raise CoworkEnvError(f"{out}: not a model folder (no config.json); refusing to replace it")


def build_tiny_model(
    out: Path, *, seed: int = 0, config: TinyConfig | None = None, force: bool = False, examples: Path | None = EXAMPLES
) -> Path:
    """Build the tiny model into `out` (written whole or not at all) and return `out`.

    Refuses a non-empty `out` unless `force`, and even then a folder that holds no model. The same seed, config and
    corpus give byte-identical files: the tokenizer does not depend on the seed (so every tiny model shares one
    vocabulary), the weights do.
    """
    import tokenizers
    import torch
    import transformers

    config = config or TinyConfig()
    out = Path(out)
    check_model_out(out, force)
    if seed < 0:
        raise CoworkEnvError(f"seed must be >= 0, got {seed}")
    documents = corpus_documents(examples)
    tokenizer = _fast_tokenizer(_train_tokenizer(documents, config.vocab_size), config)
    model = _model(tokenizer, config, seed)
    card = {
        "builder": BUILDER,
        "what": "random-init Qwen2 causal LM for offline tests; it has learned nothing",
        "seed": seed,
        "parameters": sum(p.numel() for p in model.parameters()),
        "config": config.model_dump(),
        "vocab_size": len(tokenizer),
        "corpus": {
            "documents": len(documents),
            "characters": sum(map(len, documents)),
            "sha256": _hash_documents(documents),
        },
        "versions": {
            "transformers": transformers.__version__,
            "tokenizers": tokenizers.__version__,
            "torch": torch.__version__.split("+")[0],
        },
    }
    with staged(out, folder=True) as tmp, quiet_transformers():
        model.save_pretrained(tmp, safe_serialization=True)
        tokenizer.save_pretrained(tmp)
        (tmp / CARD).write_text(json.dumps(card, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        for file in tmp.iterdir():  # safetensors writes its file owner-only; a model is for every user of the machine
            file.chmod(0o644)
    return out


def read_card(path: Path) -> dict[str, Any]:
    """The model card of a built tiny model; a clear error when `path` is not one."""
    card = Path(path) / CARD
    if not card.is_file():
        raise CoworkEnvError(f"{path}: not a CoworkEnv model directory (no {CARD})")
    return json.loads(card.read_text(encoding="utf-8"))


def model_files(path: Path) -> list[str]:
    return sorted(p.name for p in Path(path).iterdir() if p.is_file())
