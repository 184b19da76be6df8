"""Local-model inference (the `hf:` agent) against today's path, on the same machine in the same run.

Method: the same model folder plays the same held-out tasks × trials through the rollout engine (greedy, batch 16),
three ways, each in a fresh process (bench/_inference_worker.py) that imports CoworkEnv from its own tree:

- **before**: the code of an older commit (default 41999bc, before the KV cache), checked out into a scratch git
  worktree: every turn re-renders and re-prefills the whole conversation, batched by `generate` with left padding;
- **no cache**: this tree with `cache_mb=0`: the new engine (batched decoding into preallocated buffers, greedy
  duplicates decoded once) but every turn prefilled from scratch;
- **cache**: this tree as shipped: each prompt prefilled only past its longest cached prefix (earlier turns,
  other trials of the task).

Reported per path: wall seconds, episodes per minute, prompt tokens seen, prompt tokens actually computed, decoded
tokens, mean score and passes (the three should agree closely: same model, greedy); and, for this tree, prefill
tokens/s of a 1,024-token prompt and decode tokens/s at batch 1, 8 and 16. The paths run one after the other, so run
it on a quiet machine.

    python bench/local_inference.py --model models/smollm2-sft --suite data/runs/<eval run>/eval/suite.jsonl
    python bench/local_inference.py --model models/smollm2 --suite suite.jsonl --tasks 48 --json
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
BENCH = Path(__file__).resolve().parent
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

from _common import machine_info  # noqa: E402

WORKER = BENCH / "_inference_worker.py"
DEFAULT_REV = "41999bc"


def worker(tree: Path, what: str, args: argparse.Namespace, **extra: Any) -> dict[str, Any]:
    command = [
        sys.executable,
        str(WORKER),
        "--tree",
        str(tree),
        "--what",
        what,
        "--model",
        args.model,
        "--tasks",
        str(args.tasks),
        "--trials",
        str(args.trials),
        "--batch-size",
        str(args.batch_size),
        "--max-new-tokens",
        str(args.max_new_tokens),
    ]
    if args.suite:
        command += ["--suite", args.suite]
    if args.max_turns:
        command += ["--max-turns", str(args.max_turns)]
    for key, value in extra.items():
        command += [f"--{key.replace('_', '-')}", str(value)]
    done = subprocess.run(command, capture_output=True, text=True, cwd=tree)
    if done.returncode != 0:
        raise SystemExit(f"{what} in {tree} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True, help="A transformers checkpoint folder with a chat template.")
    parser.add_argument("--suite", required=True, help="A .jsonl file of tasks (an evaluation run's eval/suite.jsonl).")
    parser.add_argument("--tasks", type=int, default=12, help="The suite's first N tasks.")
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--max-new-tokens", type=int, default=256)
    parser.add_argument(
        "--max-turns", type=int, default=None, help="Assistant turns per episode (default: the task's)."
    )
    parser.add_argument("--rev", default=DEFAULT_REV, help="The commit whose code is 'before'.")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    args.model, args.suite = str(Path(args.model).resolve()), str(Path(args.suite).resolve())

    results: dict[str, Any] = {"machine": machine_info(None), "rev": args.rev, "settings": vars(args).copy()}
    with tempfile.TemporaryDirectory(prefix="coworkenv-before-") as scratch:
        before = Path(scratch) / "tree"
        subprocess.run(
            ["git", "-C", str(REPO), "worktree", "add", "--detach", str(before), args.rev],
            check=True,
            capture_output=True,
        )
        try:
            results["before"] = worker(before, "trials", args)
        finally:
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(before)], capture_output=True)
    results["no cache"] = worker(REPO, "trials", args, cache_mb=0)
    results["cache"] = worker(REPO, "trials", args)
    results["micro"] = {dtype: worker(REPO, "micro", args, dtype=dtype) for dtype in ("float32", "bfloat16")}
    base = results["before"]["seconds"]
    for path in ("before", "no cache", "cache"):
        results[path]["speedup"] = round(base / results[path]["seconds"], 2)
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(
        f"{args.tasks} tasks × {args.trials} trials, batch {args.batch_size}, {args.max_new_tokens} new tokens a turn; {results['machine']['cpu']}"
    )
    print(
        "| path | seconds | episodes/min | turns | prompt tokens | computed | decoded | mean score | passed | speedup |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for path in ("before", "no cache", "cache"):
        r = results[path]
        print(
            f"| {path} | {r['seconds']:.0f} | {r['episodes_per_min']:.1f} | {r['turns']} | {r['prompt_tokens']:,} | {r['prefilled_tokens']:,} | "
            f"{r['completion_tokens']:,} | {r['mean_score']:.3f} | {r['passed']} | {r['speedup']:.2f}× |"
        )
    for dtype, m in results["micro"].items():
        print(
            f"{dtype}: prefill {m['prefill_tokens_per_s']:.0f} tokens/s; decode {m['decode_tokens_per_s_b1']:.0f} / "
            f"{m['decode_tokens_per_s_b8']:.0f} / {m['decode_tokens_per_s_b16']:.0f} tokens/s at batch 1 / 8 / 16"
        )


if __name__ == "__main__":
    main()
