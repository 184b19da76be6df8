"""The tiny model: how long `build_tiny_model` takes, and the `hf:` agent's generation speed at batch 1 and batch 16.

Method: build the tiny model (seed 0) into a temporary directory `builds` times in this process and report the
median (the first build also pays for importing transformers/torch, so it is reported apart). Then load it as
`hf:<dir>` (greedy, `max_new_tokens` per reply) and take the first turn of N procedurally generated tasks (every
family, difficulties 1-5: system prompt, instruction, the task's tool schemas). Two modes answer the same N
conversations, interleaved repeat by repeat after an untimed warm-up:
- **batch 1**: `reply_batch([request])` once per conversation;
- **batch 16**: `reply_batch(all N)` with `batch_size=16` (left padding, attention mask).
Tokens/s = completion tokens per wall-clock second (median repeat); prompt tokens are counted apart. Greedy
decoding must give the same replies in both modes, or the run fails. One process pinned to one CPU, torch on
`--threads` threads (default 1).

    python bench/tiny_model.py                  # markdown
    python bench/tiny_model.py --json
    python bench/tiny_model.py --n 64 --max-new-tokens 32 --repeats 5
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # runnable from a checkout without `pip install -e .`
    sys.path.insert(0, str(REPO))

from _common import calibrated, calibration, calibration_line, machine_info, pin_to_one_core, time_modes  # noqa: E402  (bench/ is on sys.path when run)

from coworkenv.agents import Request, load_agent  # noqa: E402
from coworkenv.episode.runner import initial_messages  # noqa: E402
from coworkenv.synth.family import load_families  # noqa: E402
from coworkenv.synth.generate import build_task  # noqa: E402
from coworkenv.train.tiny import build_tiny_model, read_card  # noqa: E402
from coworkenv.workspace.tools import tool_schemas  # noqa: E402

BIG_BATCH = 16


def task_prompts(n: int) -> list[Request]:
    """The first turn of n generated tasks, round-robin over the families and difficulties 1-5."""
    families = [family for _, family in load_families().items()]
    requests = []
    for i in range(n):
        spec = build_task(families[i % len(families)], seed=i, difficulty=1 + i % 5)
        requests.append(Request(messages=initial_messages(spec), tools=tool_schemas(spec.tools), seed=i))
    return requests


def time_builds(out: Path, builds: int) -> list[float]:
    seconds = []
    for i in range(builds):
        start = time.perf_counter()
        build_tiny_model(out, seed=0, force=i > 0)
        seconds.append(time.perf_counter() - start)
    return seconds


def run(n: int, max_new_tokens: int, builds: int, warmup: int, repeats: int, threads: int) -> dict[str, Any]:
    import torch
    import transformers

    pinned = pin_to_one_core()
    torch.set_num_threads(threads)
    calib = calibration()
    with tempfile.TemporaryDirectory() as tmp:
        model_dir = Path(tmp) / "tiny"
        build_s = time_builds(model_dir, builds)
        card = read_card(model_dir)
        # no prefix cache: it would serve every pass after the first from memory; this measures batching
        agent = load_agent(
            f"hf:{model_dir}", max_new_tokens=max_new_tokens, batch_size=BIG_BATCH, device="cpu", cache_mb=0
        )
        requests = task_prompts(n)
        replies: dict[str, list] = {}

        def batch_1() -> None:
            replies["batch 1"] = [agent.reply_batch([request])[0] for request in requests]

        def batch_16() -> None:
            replies[f"batch {BIG_BATCH}"] = agent.reply_batch(requests)

        timings, cpu = time_modes(
            {"batch 1": batch_1, f"batch {BIG_BATCH}": batch_16}, rounds=1, warmup=warmup, repeats=repeats
        )
    one, many = replies["batch 1"], replies[f"batch {BIG_BATCH}"]
    if [r.raw for r in one] != [r.raw for r in many] or any(r.error for r in one):
        raise SystemExit("batched greedy replies differ from one-by-one replies (or a reply failed)")
    completion = sum(r.completion_tokens for r in one)
    prompt = sum(r.prompt_tokens for r in one)
    modes = {}
    for name, per_round in timings.items():
        median = statistics.median(per_round)
        modes[name] = {
            "tokens_per_s": completion / median,
            "tokens_per_s_min": completion / max(per_round),
            "tokens_per_s_max": completion / min(per_round),
            "tokens_per_cpu_s": completion / statistics.median(cpu[name]),
            "tokens_per_cpu_s_per_1k_calib": calibrated(
                completion / statistics.median(cpu[name]), calib
            ),  # CPU time against CPU time
            "prompt_tokens_per_s": prompt / median,
            "s_per_pass": median,
            "repeats_s": per_round,
        }
    return {
        "benchmark": "tiny_model",
        "conversations": n,
        "max_new_tokens": max_new_tokens,
        "prompt_tokens": prompt,
        "prompt_tokens_mean": prompt / n,
        "completion_tokens": completion,
        "stopped_early": sum(r.meta["finish"] == "stop" for r in one),
        "format_errors": sum(r.format_error is not None for r in one),
        "tool_calls": sum(len(r.message.get("tool_calls") or ()) for r in one),
        "speedup": modes[f"batch {BIG_BATCH}"]["tokens_per_s"] / modes["batch 1"]["tokens_per_s"],
        "speedup_cpu": modes[f"batch {BIG_BATCH}"]["tokens_per_cpu_s"] / modes["batch 1"]["tokens_per_cpu_s"],
        "build_s_first": build_s[0],
        "build_s_median": statistics.median(build_s[1:]) if len(build_s) > 1 else build_s[0],
        "builds": builds,
        "model": {"parameters": card["parameters"], "vocab_size": card["vocab_size"], "config": card["config"]},
        "warmup": warmup,
        "repeats": repeats,
        "threads": threads,
        "machine": machine_info(pinned) | {"torch": torch.__version__, "transformers": transformers.__version__},
        "calibration": calib,
        "modes": modes,
    }


def markdown(result: dict[str, Any]) -> str:
    m = result["machine"]
    lines = [
        f"Machine: {m['cpu']} ({m['logical_cpus']} logical CPUs, pinned to CPU {m['pinned_cpu']}, torch on {result['threads']} "
        f"thread(s)), {m['implementation']} {m['python']}, torch {m['torch']}, transformers {m['transformers']}, {m['platform']}",
        calibration_line(result["calibration"]),
        f"Model: {result['model']['parameters']:,} parameters, vocab {result['model']['vocab_size']:,}; built in "
        f"{result['build_s_median']:.2f} s (median of {max(result['builds'] - 1, 1)}; first build {result['build_s_first']:.2f} s).",
        f"Workload: {result['conversations']} first-turn prompts of generated tasks ({result['prompt_tokens_mean']:,.0f} prompt tokens "
        f"on average), greedy, up to {result['max_new_tokens']} new tokens each ({result['completion_tokens']:,} in all, "
        f"{result['stopped_early']} replies stopped early); {result['repeats']} repeats after {result['warmup']} warm-up.",
        "",
        "| mode | completion tokens/s (median) | min – max | tokens per CPU-second | the same, per 1k calib | prompt tokens/s | s per pass |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, r in result["modes"].items():
        lines.append(
            f"| {name} | {r['tokens_per_s']:,.0f} | {r['tokens_per_s_min']:,.0f} – {r['tokens_per_s_max']:,.0f} "
            f"| {r['tokens_per_cpu_s']:,.0f} | {r['tokens_per_cpu_s_per_1k_calib']:.2f} | {r['prompt_tokens_per_s']:,.0f} | {r['s_per_pass']:.2f} |"
        )
    lines += [
        "",
        f"Speed-up of batch {BIG_BATCH} over batch 1: **{result['speedup']:.2f}x** wall clock, "
        f"{result['speedup_cpu']:.2f}x per CPU-second (same replies, greedy).",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=32, help="conversations per pass (default 32)")
    parser.add_argument("--max-new-tokens", type=int, default=64, help="new tokens per reply at most (default 64)")
    parser.add_argument("--builds", type=int, default=3, help="model builds to time (default 3)")
    parser.add_argument("--warmup", type=int, default=1, help="untimed passes per mode (default 1)")
    parser.add_argument(
        "--repeats", type=int, default=3, help="timed passes per mode; the median is reported (default 3)"
    )
    parser.add_argument(
        "--threads", type=int, default=1, help="torch threads (default 1: the process is pinned to one CPU)"
    )
    parser.add_argument("--json", action="store_true", help="print the result as JSON instead of markdown")
    args = parser.parse_args(argv)
    if min(args.n, args.max_new_tokens, args.builds, args.repeats, args.threads) < 1 or args.warmup < 0:
        parser.error("--n, --max-new-tokens, --builds, --repeats and --threads must be >= 1, --warmup >= 0")
    result = run(args.n, args.max_new_tokens, args.builds, args.warmup, args.repeats, args.threads)
    print(json.dumps(result, indent=2) if args.json else markdown(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
