"""SFT throughput on a real model on this machine: today's settings against the ones a 135M model on a CPU needs.

Method: `coworkenv train sft` (the library's `train_sft`) on the same model and release for `--steps` optimizer steps
per setting, each in a fresh process, one after the other; the figure is TRL's own count of the tokens it fed the
model (padding excluded) over the job's training time (`training.json`: `tokens`, `seconds`), so a setting that pads
gets no credit for its padding. The first setting is the job as it ran before LoRA, packing and bf16 existed: TRL's
defaults (gradient checkpointing on), float32, batches of 4 conversations padded to the longest.

    python bench/train_throughput.py --model models/smollm2 --release latest [--steps 8] [--json]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

from _common import machine_info  # noqa: E402

SETTINGS: dict[str, dict[str, Any]] = {
    "before (fp32, batch 4 padded, checkpointing)": {"batch_size": 4, "gradient_checkpointing": True},
    "fp32, packed": {"batch_size": 1, "packing": True},
    "bf16, packed": {"batch_size": 1, "packing": True, "bf16": True},
    "bf16, packed, LoRA r16": {"batch_size": 1, "packing": True, "bf16": True, "lora_rank": 16},
}

JOB = """
import json, sys
from coworkenv.train.sft import SFTJobConfig, train_sft
record = train_sft(SFTJobConfig(**json.loads(sys.argv[1])), sys.argv[2] or None)
print(json.dumps({k: record[k] for k in ("tokens", "seconds", "tokens_per_s", "steps", "first_loss", "last_loss", "fit")}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True)
    parser.add_argument("--release", default="latest")
    parser.add_argument("--data-root", default="")
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--max-length", type=int, default=2048)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results: dict[str, Any] = {"machine": machine_info(None), "steps": args.steps, "settings": {}}
    with tempfile.TemporaryDirectory(prefix="coworkenv-sft-bench-") as scratch:
        for i, (name, extra) in enumerate(SETTINGS.items()):
            config = {
                "model": args.model,
                "release": args.release,
                "out": str(Path(scratch) / f"ck{i}"),
                "max_steps": args.steps,
                "max_length": args.max_length,
                "learning_rate": 1e-4,
                "warmup_steps": 0,
                "logging_steps": 1,
                **extra,
            }
            done = subprocess.run(
                [sys.executable, "-c", JOB, json.dumps(config), args.data_root], capture_output=True, text=True
            )
            if done.returncode != 0:
                raise SystemExit(f"{name} failed:\n{done.stderr[-3000:]}")
            results["settings"][name] = json.loads(done.stdout.strip().splitlines()[-1])
    base = next(iter(results["settings"].values()))["tokens_per_s"]
    for record in results["settings"].values():
        record["speedup"] = round(record["tokens_per_s"] / base, 2)
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(f"{args.steps} steps each, max length {args.max_length}; {results['machine']['cpu']}")
    print("| setting | tokens/s | seconds | tokens | speedup |")
    print("|---|---|---|---|---|")
    for name, r in results["settings"].items():
        print(f"| {name} | {r['tokens_per_s']:.0f} | {r['seconds']:.0f} | {r['tokens']:,} | {r['speedup']:.2f}× |")


if __name__ == "__main__":
    main()
