"""One measurement of bench/local_inference.py, in a process of its own: CoworkEnv is imported from `--tree` only (this
working tree, or a scratch worktree of an older commit), so each path runs its own code on the same model folder."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path


def trials(args: argparse.Namespace) -> dict:
    """`--tasks` tasks of the suite × `--trials`, played by `hf:<model>` through the rollout engine."""
    from coworkenv.agents.base import load_agent
    from coworkenv.rollout.engine import run_trials
    from coworkenv.spec.io import load_tasks

    specs = load_tasks(Path(args.suite))[: args.tasks]
    options = {"batch_size": args.batch_size, "max_new_tokens": args.max_new_tokens}
    if args.cache_mb is not None:
        options["cache_mb"] = args.cache_mb
    agent = load_agent(f"hf:{args.model}", **options)
    start = time.perf_counter()
    records = run_trials(
        specs, agent, trials=args.trials, runtime="none", episode_wall_s=86_400.0, max_turns=args.max_turns, seed=0
    )
    seconds = time.perf_counter() - start
    turns = [t for r in records for t in r.trace]
    prompt = sum(t["prompt_tokens"] for t in turns)
    cache = getattr(agent, "cache", None)
    reused = cache.reused_tokens if cache is not None else 0
    return {
        "seconds": round(seconds, 2),
        "episodes": len(records),
        "episodes_per_min": round(len(records) / seconds * 60, 2),
        "turns": len(turns),
        "prompt_tokens": prompt,
        "prefilled_tokens": prompt - reused,
        "completion_tokens": sum(t["completion_tokens"] for t in turns),
        "mean_score": round(sum(r.grade.score for r in records if r.grade) / len(records), 4),
        "passed": sum(1 for r in records if r.grade and r.grade.passed),
    }


def micro(args: argparse.Namespace) -> dict:
    """Prefill tokens/s of one 1,024-token prompt, and decode tokens/s of the engine at batch 1, 8 and 16 (a 512-token
    context per row, 32 new tokens, no early stop)."""
    import torch
    from transformers import AutoModelForCausalLM

    from coworkenv.agents.kv import PrefixCache, generate

    lm = AutoModelForCausalLM.from_pretrained(args.model, dtype=args.dtype).eval()
    ids = torch.randint(100, 40_000, (1, 1024), generator=torch.Generator().manual_seed(0))
    out = {}
    with torch.inference_mode():
        lm(input_ids=ids[:, :64])
        start = time.perf_counter()
        lm(input_ids=ids, logits_to_keep=1)
        out["prefill_tokens_per_s"] = round(1024 / (time.perf_counter() - start), 1)
    for batch in (1, 8, 16):
        prompts = [ids[0, i : i + 512].tolist() for i in range(batch)]
        timed = []
        for budget in (1, 33):  # the prefill (and first token) alone, then the same with 32 decoding steps more
            start = time.perf_counter()
            generate(lm, prompts, [budget] * batch, cache=PrefixCache(0), stop_ids=[-1])
            timed.append(time.perf_counter() - start)
        out[f"decode_tokens_per_s_b{batch}"] = round(32 * batch / (timed[1] - timed[0]), 1)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tree", required=True)
    parser.add_argument("--what", choices=("trials", "micro"), required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--suite")
    parser.add_argument("--tasks", type=int, default=12)
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--max-new-tokens", type=int, default=256)
    parser.add_argument("--max-turns", type=int, default=None)
    parser.add_argument("--cache-mb", type=int, default=None)
    parser.add_argument("--dtype", default="float32")
    args = parser.parse_args()
    sys.path.insert(0, args.tree)  # and no editable-install finder that would fill a module from this checkout instead
    sys.meta_path[:] = [f for f in sys.meta_path if not getattr(f, "__module__", "").startswith("__editable__")]
    import coworkenv

    if Path(coworkenv.__file__).resolve().parents[1] != Path(args.tree).resolve():
        raise SystemExit(f"coworkenv came from {coworkenv.__file__}, not from {args.tree}")
    result = trials(args) if args.what == "trials" else micro(args)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
