"""Whether bfloat16 autocast pays on this machine: one forward and backward (and an AdamW step) of a causal LM on
1,024 tokens, in float32 and under bf16 autocast, each twice (the first warms up). docs/benchmarks.md quotes it.

    python bench/bf16_check.py models/smollm2
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "model", type=Path, help="A checkpoint folder (e.g. `coworkenv model smollm2 --out models/smollm2`)."
    )
    parser.add_argument("--tokens", type=int, default=1024)
    args = parser.parse_args()

    import torch
    from transformers import AutoModelForCausalLM

    from coworkenv.train.checkpoint import bf16_pays, bf16_speed_ratio

    model = AutoModelForCausalLM.from_pretrained(args.model, dtype=torch.float32)
    model.train()
    ids = torch.randint(0, model.config.vocab_size, (1, args.tokens))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-6)
    print(
        f"bf16_pays() = {bf16_pays()} (the probe: bf16 takes {bf16_speed_ratio():.2f}× float32's time); "
        f"torch threads {torch.get_num_threads()}; CPU capability {torch.backends.cpu.get_cpu_capability()}"
    )
    for bf16 in (False, True, False, True):
        start = time.perf_counter()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        print(
            f"{'bf16 autocast' if bf16 else 'float32'}: {time.perf_counter() - start:.1f} s for {args.tokens} tokens",
            flush=True,
        )


if __name__ == "__main__":
    main()
