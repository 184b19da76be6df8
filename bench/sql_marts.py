"""Latency of the SQL marts (and example queries) over a release with 1,000,000 trajectory rows.

Method:
1. Build once (cached under `out/bench-sql/<trajectories>/`, reused while the parameters match; `--rebuild` forces
   it) a release the way the pipeline makes one: tables from the release builder (`coworkenv.data.build`),
   published by `coworkenv.data.publisher.publish_release`. Realistic content comes from a pool of real tasks: the
   procedural generators build `--pool` tasks, and real episodes (oracle, empty, half the oracle, oracle plus a
   prohibited call, played and graded by `coworkenv.grading.play`) give their trajectory rows. The release is drawn
   from that pool with a seeded NumPy RNG at scale: ~52k original tasks (copies of pool tasks under new ids and
   difficulties; 20% failing a mandatory battery check, repaired in up to two rounds), 12 battery rows per
   validated spec, 20 trajectories per published task (oracle, empty agent, 3 models × 6 trials) cut at exactly
   `--trajectories` rows, SFT rows from the passing oracle trajectories and each model's passing first trial, one
   RL prompt per task, an evaluation of 5,000 tasks × 4 models × 3 trials, and the capability profile from it.
   Row dicts are made from the pool's rows and handed to the builder's table functions in large batches.
2. Open the catalog (`coworkenv.data.catalog.connect`, every view created) and time it.
3. For every intermediate and mart view, then every example query: one untimed warm-up, then `--repeats` timed runs of
   `select * from <mart>` fetched to Arrow; report the median (and min / max) wall-clock time.

    python bench/sql_marts.py                          # markdown tables
    python bench/sql_marts.py --trajectories 100000 --json
    python bench/sql_marts.py --root memory            # the same release read through fsspec (memory://)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

REPO = Path(__file__).resolve().parents[1]
for _p in (REPO, REPO / "bench"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402
from _common import calibrated_s, calibration, calibration_line, cpu_model, display_path  # noqa: E402

from coworkenv.data import catalog  # noqa: E402
from coworkenv.data.build import (  # noqa: E402
    capability_profile_table,
    eval_results_table,
    repairs_table,
    rl_table,
    sft_table,
    tasks_table,
    trajectories_table,
    trajectory_row,
    validations_table,
)
from coworkenv.data.publisher import publish_release  # noqa: E402
from coworkenv.data.sql_limits import QueryLimits  # noqa: E402
from coworkenv.spec.task import Meta, TaskSpec  # noqa: E402
from coworkenv.spec.verdict import CheckOutcome, TaskValidation  # noqa: E402
from coworkenv.validate.codes import BATTERY_CODES  # noqa: E402

TARGET_S = 1.0
BUILD_VERSION = 2
KINDS = ("oracle", "empty", "prefix", "violation")
MODELS = {"base-8b": 0.55, "sft-8b": 0.75, "rl-8b": 0.8}  # rollout policies: skill before the difficulty penalty
MODEL_TRIALS = 6
EVAL_MODELS = {"base-8b": 0.45, "sft-8b": 0.62, "rl-8b": 0.68, "teacher": 0.85}
EVAL_TASKS = 5000
EVAL_TRIALS = 3
BATCH = 100_000
"""Trajectory rows per `trajectories_table` call: the batches stay well under Arrow's 2 GiB per string array."""
CODES = list(BATTERY_CODES)
BREAKABLE = ("no_leakage", "solvable_under_faults", "references", "deterministic", "capabilities_consistent")
PATCH = [{"op": "replace", "path": "/instruction", "value": "..."}]


# --- the pool of real tasks and episodes ----------------------------------------------------------------------


def build_pool(n: int, seed: int) -> list[dict[str, Any]]:
    """Real tasks, each with the `trajectories` row of four behaviours (in `KINDS` order)."""
    from coworkenv.grading.consistency import with_violation
    from coworkenv.grading.play import ANSWER_ONLY_TEXT, play, play_null
    from coworkenv.spec.task import AnswerStep, ToolStep
    from coworkenv.synth.generate import GenerateRequest, generate

    specs, _ = generate(GenerateRequest(n=n, seed=seed))
    pool = []
    for spec in specs:
        tool_steps = [s for s in spec.solution if isinstance(s, ToolStep)]
        runs = {
            "oracle": play(spec),
            "empty": play_null(spec),
            "prefix": play(spec, [*tool_steps[: max(1, len(tool_steps) // 2)], AnswerStep(answer=ANSWER_ONLY_TEXT)]),
            # without rules the violation kind falls back to the oracle
            "violation": play(spec, with_violation(spec, spec.prohibited[0]) if spec.prohibited else None),
        }
        episodes = [trajectory_row(spec, runs[k].trajectory, runs[k].grade, agent="oracle") for k in KINDS]
        pool.append({"spec": spec, "episodes": episodes})
    return pool


# --- the release at scale -------------------------------------------------------------------------------------


def _variant(template: TaskSpec, task_id: str, difficulty: int, seed: int, **lineage: Any) -> TaskSpec:
    """A pool task under a new id and difficulty (a copy: no validation, the template was valid)."""
    meta = Meta(seed=seed, generator=template.meta.generator, **lineage)
    return template.model_copy(update={"id": task_id, "difficulty": difficulty, "meta": meta})


def _verdict(task_id: str, broken: int, advisory: int) -> TaskValidation:
    """The battery's verdict with the codes at index `broken` (mandatory) and `advisory` failing (-1: none)."""
    results = [
        CheckOutcome.model_construct(
            task_id=task_id,
            code=code,
            passed=i not in (broken, advisory),
            severity=severity,
            discriminating=disc,
            details={},
            message="" if i not in (broken, advisory) else "battery check failed",
        )
        for i, (code, (severity, disc, _)) in enumerate(BATTERY_CODES.items())
    ]
    scored = [r.passed for r in results if r.discriminating]
    return TaskValidation.model_construct(
        task_id=task_id,
        valid=broken < 0,
        discrimination=sum(scored) / len(scored),
        results=results,
        battery_version=1,
        evidence_hash="",
    )


Judged = tuple[list[TaskSpec], dict[str, TaskValidation], list[dict[str, Any]], dict[str, int]]


def _judged(rng: np.random.Generator, pool: list[dict[str, Any]], n_orig: int) -> Judged:
    """Original tasks, their repairs (up to two rounds), every spec's verdict, the repair attempts, and the pool task
    each spec copies (by task id)."""
    by_family: dict[str, list[int]] = defaultdict(list)
    for i, entry in enumerate(pool):
        by_family[entry["spec"].family].append(i)
    families = sorted(by_family)
    fam_idx = rng.integers(0, len(families), n_orig)
    template = [by_family[families[f]][rng.integers(0, len(by_family[families[f]]))] for f in fam_idx]
    difficulty = rng.integers(1, 6, n_orig)
    advisory_codes = [i for i, c in enumerate(CODES) if BATTERY_CODES[c][0] == "advisory"]
    broken = np.where(rng.random(n_orig) < 0.2, rng.choice([CODES.index(c) for c in BREAKABLE], n_orig), -1)
    advisory = np.where(rng.random(n_orig) < 0.25, rng.choice(advisory_codes, n_orig), -1)

    specs, verdicts, attempts, copies = [], {}, [], {}
    for i in range(n_orig):
        spec = pool[template[i]]["spec"]
        spec = _variant(spec, f"{spec.family}-d{difficulty[i]}-{i:07d}", int(difficulty[i]), i)
        specs.append(spec)
        copies[spec.id] = template[i]
        verdicts[spec.id] = _verdict(spec.id, int(broken[i]), int(advisory[i]))
    pending = np.flatnonzero(broken >= 0)
    for round_, p_fix, strategy in ((1, 0.6, "rule"), (2, 0.5, "llm")):
        fixed = rng.random(len(pending)) < p_fix
        for i, ok in zip(pending, fixed, strict=True):
            parent, code = specs[i], CODES[broken[i]]
            name = f"rule:{code}" if strategy == "rule" else "llm"
            lineage = {
                "parent": parent.id,
                "repair": {"round": round_, "strategy": name, "patch": PATCH},
            }  # as the repair loop records it
            child = _variant(parent, f"{parent.id}-r{round_}", parent.difficulty, i, **lineage)
            specs.append(child)
            copies[child.id] = template[i]
            verdicts[child.id] = _verdict(child.id, -1 if ok else int(broken[i]), -1)
            attempts.append(
                {
                    "task_id": child.id,
                    "parent_id": parent.id,
                    "round": round_,
                    "strategy": name,
                    "codes_addressed": [code],
                    "patch": PATCH,
                    "valid_after": bool(ok),
                    "failed_codes_after": [] if ok else [code],
                }
            )
        pending = pending[~fixed]
    return specs, verdicts, attempts, copies


def _rollouts(
    rng: np.random.Generator, episodes: dict[str, list[dict[str, Any]]], published: list[TaskSpec], n_traj: int
) -> tuple[pa.Table, list]:
    """Oracle, empty agent, then each model's trials per published task (its pool task's `episodes`), cut at `n_traj`
    rows; and the rows SFT is made from."""
    agents = [("oracle", "", 0), ("null", "", 0)] + [("hf", m, t) for m in MODELS for t in range(MODEL_TRIALS)]
    skill = np.array([1.0, 0.0] + [MODELS[m] for _, m, _ in agents[2:]])
    t_task = np.repeat(np.arange(len(published)), len(agents))[:n_traj]
    t_slot = np.tile(np.arange(len(agents)), len(published))[:n_traj]
    difficulty = np.array([s.difficulty for s in published])
    p_pass = np.clip(skill[t_slot] - 0.08 * (difficulty[t_task] - 1) * (t_slot >= 2), 0, 1)
    u = rng.random(n_traj)
    kind = np.where(u < p_pass, 0, np.where(u < p_pass + 0.08, 3, 2))
    kind[t_slot == 0], kind[t_slot == 1] = 0, 1
    batches, sft_sources = [], []
    for start in range(0, n_traj, BATCH):
        rows = []
        for j in range(start, min(start + BATCH, n_traj)):
            spec, (agent, model, trial) = published[t_task[j]], agents[t_slot[j]]
            # the id names the model: `trajectory_row`'s <task>/<agent>/<trial> repeats across the models of agent hf
            row = {
                **episodes[spec.id][kind[j]],
                "trajectory_id": f"{spec.id}/{agent}/{model or agent}-{trial}",
                "task_id": spec.id,
                "agent": agent,
                "model": model,
                "trial": trial,
                "difficulty": spec.difficulty,
            }
            rows.append(row)
            if row["passed"] and (t_slot[j] == 0 or (t_slot[j] >= 2 and trial == 0)):
                sft_sources.append(row)
        batches.append(trajectories_table(rows))
    return pa.concat_tables(batches), sft_sources


def _evaluation(rng: np.random.Generator, published: list[TaskSpec]) -> tuple[pa.Table, pa.Table]:
    """`EVAL_TRIALS` trials per model on the first `EVAL_TASKS` published tasks, and the capability profile they give."""
    e_n = min(EVAL_TASKS, len(published))
    e_task = np.repeat(np.arange(e_n), len(EVAL_MODELS) * EVAL_TRIALS)
    e_model = np.tile(np.repeat(np.array(list(EVAL_MODELS), dtype=object), EVAL_TRIALS), e_n)
    e_trial = np.tile(np.arange(EVAL_TRIALS), e_n * len(EVAL_MODELS))
    difficulty = np.array([s.difficulty for s in published[:e_n]])
    e_skill = np.array([EVAL_MODELS[m] for m in e_model]) - 0.06 * (difficulty[e_task] - 1)
    u = rng.random(len(e_task))
    passed = u < e_skill
    empty = ~passed & (u > 0.97)
    violation = ~passed & ~empty & (u > 0.92)
    completion = np.where(passed, 1.0, np.where(empty, 0.0, 0.5))
    robustness = np.where(empty, 0.0, 1.0)
    score = np.where(violation | empty, 0.0, 0.8 * completion + 0.2 * robustness)
    rows: list[dict[str, Any]] = []
    profile: dict[tuple[str, str, int], list[int]] = defaultdict(lambda: [0, 0])
    for j, i in enumerate(e_task):
        spec = published[i]
        rows.append(
            {
                "eval_id": "eval-0001",
                "model": e_model[j],
                "task_id": spec.id,
                "trial": int(e_trial[j]),
                "family": spec.family,
                "capabilities": spec.capabilities,
                "difficulty": spec.difficulty,
                "completion": float(completion[j]),
                "safety": 0.0 if violation[j] else 1.0,
                "robustness": float(robustness[j]),
                "score": float(score[j]),
                "passed": bool(passed[j]),
                "empty": bool(empty[j]),
                "n_violations": int(violation[j]),
            }
        )
        for cap in spec.capabilities:
            cell = profile[(e_model[j], cap, spec.difficulty)]
            cell[0] += 1
            cell[1] += bool(passed[j])
    profile_rows = [
        {"model": m, "capability": c, "difficulty": d, "attempts": a, "passes": p}
        for (m, c, d), (a, p) in sorted(profile.items())
    ]
    return eval_results_table(rows), capability_profile_table(profile_rows)


def build_release(root: Path, n_traj: int, seed: int, pool: list[dict[str, Any]]) -> dict[str, int]:
    """Build every table with the release builder and publish them under `root`; the row counts."""
    rng = np.random.default_rng(seed)
    per_task = 2 + len(MODELS) * MODEL_TRIALS
    n_orig = int(-(-n_traj // per_task) / 0.94) + 1
    specs, verdicts, attempts, copies = _judged(rng, pool, n_orig)
    published = [s for s in specs if verdicts[s.id].valid]
    episodes = {s.id: pool[copies[s.id]]["episodes"] for s in published}
    trajectories, sft_sources = _rollouts(rng, episodes, published, n_traj)
    eval_results, profile = _evaluation(rng, published)
    by_id = {s.id: s for s in published}
    tables = {
        "tasks": tasks_table(published, verdicts),
        "validations": validations_table(verdicts[s.id] for s in specs),
        "repairs": repairs_table(attempts),
        "trajectories": trajectories,
        "sft": sft_table(sft_sources, by_id),
        "rl": rl_table(published),
        "eval_results": eval_results,
        "capability_profile": profile,
    }
    shutil.rmtree(root, ignore_errors=True)  # a rebuild replaces the cached release, whose run id it shares
    manifest = publish_release(
        tables, data_root=root, run_id=f"bench-{n_traj}", parent=None, config={"trajectories": n_traj, "seed": seed}
    )
    return manifest.row_counts


# --- timing ---------------------------------------------------------------------------------------------------


def _time(con: Any, sql: str, warmup: int, repeats: int) -> dict[str, Any]:
    """Wall-clock and CPU seconds (all of DuckDB's threads) of running `sql` and fetching it to Arrow."""
    rows = 0
    for _ in range(warmup):
        rows = con.sql(sql).to_arrow_table().num_rows
    wall, cpu = [], []
    for _ in range(repeats):
        start, cpu_start = time.perf_counter(), time.process_time()
        rows = con.sql(sql).to_arrow_table().num_rows
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - cpu_start)
    return {
        "rows": rows,
        "median_s": statistics.median(wall),
        "min_s": min(wall),
        "max_s": max(wall),
        "cpu_s": statistics.median(cpu),
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    base = Path(args.out) / str(args.trajectories)
    root = base / "data"
    stamp = base / "build.json"
    params = {"trajectories": args.trajectories, "seed": args.seed, "pool": args.pool, "build_version": BUILD_VERSION}
    build: dict[str, Any]
    if args.rebuild or not stamp.is_file() or json.loads(stamp.read_text()).get("params") != params:
        start = time.perf_counter()
        pool = build_pool(args.pool, args.seed)
        pool_s = time.perf_counter() - start
        counts = build_release(root, args.trajectories, args.seed, pool)
        build = {
            "params": params,
            "counts": counts,
            "pool_s": pool_s,
            "build_s": time.perf_counter() - start,
            "cached": False,
        }
        stamp.write_text(json.dumps(build, indent=2))
    else:
        build = {**json.loads(stamp.read_text()), "cached": True}
    build["bytes"] = sum(p.stat().st_size for p in root.rglob("*.parquet"))
    build["files"] = sum(1 for _ in root.rglob("*.parquet"))

    where: Any = root
    if args.root == "memory":  # the same files on a non-local fsspec root: DuckDB reads them through fsspec
        import fsspec

        where = "memory://bench-sql/data"
        fs, path = fsspec.core.url_to_fs(where)
        fs.put(str(root / "releases"), f"{path}/releases", recursive=True)
    start = time.perf_counter()
    con = catalog.connect(where, "latest", limits=QueryLimits(threads=args.threads) if args.threads else None)
    connect_s = time.perf_counter() - start
    threads = con.sql("select current_setting('threads')").fetchall()[0][0]
    views = [(name, path.parent.name) for name, path in catalog.view_files() if path.parent.name != "staging"]
    (seen,) = con.sql("select n_trajectories from release_overview").fetchall()
    if seen[0] != args.trajectories:
        raise SystemExit(f"the release holds {seen[0]} trajectories, not {args.trajectories}: rebuild with --rebuild")
    results: dict[str, dict[str, Any]] = {}
    for name, stage in views:
        results[name] = {"kind": stage, **_time(con, f"select * from {name}", args.warmup, args.repeats)}
    if not args.marts_only:
        for path in sorted((catalog.SQL_DIR / "queries").glob("*.sql")):
            results[f"queries/{path.name}"] = {
                "kind": "query",
                **_time(con, path.read_text(encoding="utf-8"), args.warmup, args.repeats),
            }
    con.close()
    import duckdb

    machine = {
        "cpu": cpu_model(),
        "logical_cpus": os.cpu_count(),
        "duckdb_threads": threads,
        "duckdb": duckdb.__version__,
        "pyarrow": pa.__version__,
    }
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    calib = calibration()
    for r in results.values():
        r["median_k_calib"] = calibrated_s(r["median_s"], calib)
    return {
        "machine": {**machine, "load_1min": load},
        "calibration": calib,
        "data": {"root": display_path(root) if where is root else where, **build},
        "connect_s": connect_s,
        "results": results,
    }


def markdown(report: dict[str, Any]) -> str:
    m, d = report["machine"], report["data"]
    lines = [
        f"Machine: {m['cpu']}, {m['logical_cpus']} logical CPUs, DuckDB {m['duckdb']} with {m['duckdb_threads']} threads, "
        f"pyarrow {m['pyarrow']}; load average (1 min) {m['load_1min']:.1f} at the end of the run.",
        calibration_line(report["calibration"]),
        f"Release `{d['root']}`: {d['files']} Parquet files, {d['bytes'] / 2**20:.0f} MiB; "
        f"built in {d['build_s']:.0f} s (pool of real episodes: {d['pool_s']:.1f} s){' — cached' if d['cached'] else ''}.",
        "",
        "| table | rows |",
        "|---|---:|",
        *(f"| {t} | {n:,} |" for t, n in d["counts"].items()),
        "",
        f"Catalog connect (all views created): {report['connect_s'] * 1000:.0f} ms.",
        "",
        f"| view / query | rows out | median ms | min – max ms | CPU ms | median in k calib | under {TARGET_S:g} s |",
        "|---|---:|---:|---:|---:|---:|:---:|",
    ]
    for name, r in report["results"].items():
        ok = "yes" if r["median_s"] < TARGET_S else "**no**"
        ms = f"{r['median_s'] * 1000:.0f} | {r['min_s'] * 1000:.0f} – {r['max_s'] * 1000:.0f} | {r['cpu_s'] * 1000:.0f} | {r['median_k_calib']:,.1f}"
        lines.append(f"| {name} | {r['rows']:,} | {ms} | {ok} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trajectories", type=int, default=1_000_000, help="Trajectory rows in the release.")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--pool", type=int, default=400, help="Real tasks (and episodes) the rows are drawn from.")
    parser.add_argument("--out", default=str(REPO / "out" / "bench-sql"), help="Cache folder for the built release.")
    parser.add_argument("--rebuild", action="store_true", help="Rebuild the release even if a matching one is cached.")
    parser.add_argument("--threads", type=int, default=None, help="DuckDB threads (default: DuckDB's, one per CPU).")
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--marts-only", action="store_true", help="Skip the example queries.")
    parser.add_argument("--json", action="store_true", help="Print the report as JSON.")
    parser.add_argument(
        "--root",
        choices=("local", "memory"),
        default="local",
        help="Query the release where it was built (local) or a copy on fsspec's memory:// (DuckDB reads through fsspec).",
    )
    args = parser.parse_args()
    report = run(args)
    print(json.dumps(report, indent=2) if args.json else markdown(report))


if __name__ == "__main__":
    main()
