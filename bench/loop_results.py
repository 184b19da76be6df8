"""The experiments behind docs/results.md, from a fresh data root to the figures (every phase resumes: rerun the same
command after an interruption).

1. `first`: from the freshly built tiny model, one nightly loop (SFT on synthesized tasks): before/after on the
   held-out suite with CIs, and the contamination check.
2. `arms`: from that loop's checkpoint, the second loop twice per seed with the same task budget: planned from the
   capability profile (`guided`) and from the cold-start plan (`uniform`); per-capability deltas with CIs.
3. `methods`: from the same SFT checkpoint, GRPO, GDPO and DPO loops: reward curves and held-out scores against SFT.

    python bench/loop_results.py --out results/loop            # all phases, default budgets
    python bench/loop_results.py --out results/loop --phases first

Writes `<out>/results.json` (every figure) and `<out>/results.md` (the tables docs/results.md quotes).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import machine_info  # noqa: E402


def loop(root: Path, run_id: str, **settings: Any) -> dict[str, Any]:
    """One nightly turn (resumes when the run already started); its stage results and wall time."""
    from coworkenv.pipeline.config import NightlyConfig
    from coworkenv.pipeline.nightly import nightly, read_state
    from coworkenv.pipeline.rundir import RunDir

    start = time.perf_counter()
    nightly(NightlyConfig(**settings), run_id, root, on_stage=lambda stage, result: print(f"  [{run_id}] {stage} done", flush=True))
    return {"state": read_state(RunDir.open(run_id, root)), "seconds": round(time.perf_counter() - start, 1)}


def comparison(root: Path, before: str, after: str, seed: int = 0) -> dict[str, Any]:
    from coworkenv.eval.compare import compare
    from coworkenv.pipeline.evaluate import eval_rows

    result = compare(eval_rows(before, root), eval_rows(after, root), seed=seed)

    def cell(s: Any) -> dict[str, Any]:
        d = s.mean_score
        return {"tasks": s.n_tasks, "before": d.base, "after": d.candidate, "delta": d.value, "lo": d.lo, "hi": d.hi, "p": d.p_value,
                "pass_before": s.pass_rate.base, "pass_after": s.pass_rate.candidate}  # fmt: skip

    return {"overall": cell(result.overall), "groups": {k: cell(v) for k, v in result.groups.items()},
            "capabilities": {k: cell(v) for k, v in result.capabilities.items()}}  # fmt: skip


def summary(root: Path, release: str) -> dict[str, Any]:
    from coworkenv.eval.metrics import summarize
    from coworkenv.pipeline.evaluate import eval_rows

    o = summarize(eval_rows(release, root)).overall
    return {name: getattr(o, name).model_dump() for name in ("mean_score", "pass_rate", "safety_violation_rate", "format_error_rate")}


def phase_first(out: Path, args: argparse.Namespace) -> dict[str, Any]:
    from coworkenv.eval.suite import build_bench

    root = out / "first"
    if not (root / "bench.json").exists():
        bench = build_bench(n=args.bench_n, seed=args.bench_seed, data_root=root)
        (root / "bench.json").write_text(json.dumps({"release_id": bench.release_id, "tasks": bench.valid}))
    suite = json.loads((root / "bench.json").read_text())["release_id"]
    result = loop(root, "loop-1", suite=suite, budget=args.budget, sft_steps=args.sft_steps, sft_learning_rate=args.lr,
                  eval_trials=args.eval_trials, trials=args.trials, seed=0, method="sft")  # fmt: skip
    state = result["state"]
    contamination = json.loads((root / "runs" / "loop-1.evaluate" / "eval" / "contamination.json").read_text())
    return {"suite": suite, "seconds": result["seconds"], "before": state["profile"]["eval"], "after": state["gate_eval"]["release_id"],
            "training_release": state["gate_tasks"]["release_id"], "decision": state["promote"],
            "comparison": comparison(root, state["profile"]["eval"], state["gate_eval"]["release_id"]),
            "after_summary": summary(root, state["gate_eval"]["release_id"]), "before_summary": summary(root, state["profile"]["eval"]),
            "contamination": {k: contamination[k] for k in ("training_releases", "suite_tasks", "contaminated_ids", "max_similarity")},
            "losses": state["train"]["losses"]}  # fmt: skip


def _from_first(out: Path, name: str) -> Path:
    """A copy of the first loop's data root (its registry's current model is the SFT checkpoint, if promoted)."""
    root = out / name
    if not root.exists():
        shutil.copytree(out / "first", root)
    return root


def phase_arms(out: Path, args: argparse.Namespace, first: dict[str, Any]) -> dict[str, Any]:
    arms: dict[str, Any] = {}
    for seed in args.seeds:
        for plan in ("guided", "uniform"):
            root = _from_first(out, f"arm-{plan}-{seed}")
            result = loop(root, "loop-2", suite=first["suite"], budget=args.budget, sft_steps=args.sft_steps, sft_learning_rate=args.lr,
                          eval_trials=args.eval_trials, trials=args.trials, seed=100 + seed, plan=plan, method="sft")  # fmt: skip
            state = result["state"]
            arms[f"{plan}-{seed}"] = {"plan": plan, "seed": seed, "seconds": result["seconds"], "weakest": state["profile"]["weakest"],
                                      "comparison": comparison(root, state["profile"]["eval"], state["gate_eval"]["release_id"])}  # fmt: skip
    return arms


def phase_methods(out: Path, args: argparse.Namespace, first: dict[str, Any]) -> dict[str, Any]:
    from coworkenv.train.checkpoint import read_training

    methods: dict[str, Any] = {}
    for method in ("sft", "grpo", "gdpo", "dpo"):
        root = _from_first(out, f"method-{method}")
        result = loop(root, "loop-2", suite=first["suite"], budget=args.budget, sft_steps=args.sft_steps, sft_learning_rate=args.lr,
                      eval_trials=args.eval_trials, trials=args.trials, seed=200, method=method, rl_steps=args.rl_steps)  # fmt: skip
        state = result["state"]
        run = root / "runs" / "loop-2" / "nightly" / "checkpoints"
        curves = {job: [e for e in read_training(run / job)["log_history"] if "step" in e] for job in state["train"]["jobs"]}
        methods[method] = {"seconds": result["seconds"], "comparison": comparison(root, state["profile"]["eval"], state["gate_eval"]["release_id"]),
                           "summary": summary(root, state["gate_eval"]["release_id"]), "curves": curves}  # fmt: skip
    return methods


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="Folder of the data roots and results (created).")
    parser.add_argument("--phases", nargs="+", default=["first", "arms", "methods"], choices=["first", "arms", "methods"])
    parser.add_argument("--budget", type=int, default=300, help="Training tasks per loop.")
    parser.add_argument("--sft-steps", type=int, default=300)
    parser.add_argument("--rl-steps", type=int, default=30)
    parser.add_argument("--lr", type=float, default=1e-2, help="Peak SFT learning rate.")
    parser.add_argument("--trials", type=int, default=2, help="Rollout trials per training task.")
    parser.add_argument("--eval-trials", type=int, default=3)
    parser.add_argument("--bench-n", type=int, default=60)
    parser.add_argument("--bench-seed", type=int, default=0)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    args = parser.parse_args()
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    path = out / "results.json"
    results = json.loads(path.read_text()) if path.exists() else {}
    results["machine"] = machine_info(None)
    results["settings"] = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}
    if "first" in args.phases or "first" not in results:
        results["first"] = phase_first(out, args)
        path.write_text(json.dumps(results, indent=2))
    if "arms" in args.phases:
        results["arms"] = phase_arms(out, args, results["first"])
        path.write_text(json.dumps(results, indent=2))
    if "methods" in args.phases:
        results["methods"] = phase_methods(out, args, results["first"])
        path.write_text(json.dumps(results, indent=2))
    print(f"results: {path}")


if __name__ == "__main__":
    main()
