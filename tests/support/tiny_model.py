"""A tiny causal LM and tokenizer built offline, for CPU training tests (no hub access).

- Tokenizer: byte-level BPE trained with `tokenizers` on the given texts plus the chat template's own text, with
  Qwen2's normalizer (NFC) and pre-tokenizer (its split regex, then byte-level), so a save/load round trip through
  `AutoTokenizer` keeps the ids; wrapped as a `PreTrainedTokenizerFast` carrying TRL's tool-capable
  `qwen3_instruct_2507` chat template.
- Model: `Qwen2ForCausalLM` with a few tens of thousands of parameters.

Meant to become a library module (`coworkenv/train/`) with the training issue.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
TEMPLATE_MARKUP = ["<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>", "<tools>", "</tools>"]


def chat_template(name: str = "qwen3_instruct_2507") -> str:
    import trl

    return (Path(trl.__file__).parent / "chat_templates" / f"{name}.jinja").read_text(encoding="utf-8")


def conversation_texts(rows: Iterable[Mapping[str, Any]]) -> list[str]:
    """Corpus lines from `sft` rows: message contents, tool calls as the template prints them, and the tool schemas."""
    texts: list[str] = []
    for row in rows:
        texts.append(row["tools"])
        for tool in json.loads(row["tools"]):
            texts.append(json.dumps(tool))  # the template prints each tool with `tojson`
        for m in row["messages"]:
            texts.append(f"<|im_start|>{m['role']}\n{m['content'] or ''}<|im_end|>")
            for call in m.get("tool_calls") or ():
                texts.append(
                    f'<tool_call>\n{{"name": "{call["function"]["name"]}", "arguments": {call["function"]["arguments"]}}}\n</tool_call>'
                )
    return texts


def build_tokenizer(texts: Iterable[str], *, vocab_size: int = 1024, template: str | None = None) -> Any:
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast
    from transformers.models.qwen2.tokenization_qwen2 import PRETOKENIZE_REGEX

    template = template or chat_template()
    tok = Tokenizer(models.BPE(unk_token=None, byte_fallback=False, fuse_unk=False))
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(PRETOKENIZE_REGEX), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator([template, *TEMPLATE_MARKUP, *texts], trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>", unk_token=None
    )
    fast.chat_template = template
    return fast


def build_model(
    tokenizer: Any, *, hidden_size: int = 32, layers: int = 2, heads: int = 4, max_positions: int = 2048, seed: int = 0
) -> Any:
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(seed)
    config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        intermediate_size=2 * hidden_size,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=heads // 2,
        max_position_embeddings=max_positions,
        tie_word_embeddings=True,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=None,
    )
    return Qwen2ForCausalLM(config)


def build_tiny(rows: Iterable[Mapping[str, Any]], **model_options: Any) -> tuple[Any, Any]:
    """(model, tokenizer) for SFT on these `sft` rows."""
    tokenizer = build_tokenizer(conversation_texts(list(rows)))
    return build_model(tokenizer, **model_options), tokenizer
