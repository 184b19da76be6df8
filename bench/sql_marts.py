"""Latency of the SQL marts (and example queries) over a release with 1,000,000 trajectory rows.

Method:
1. Build once (cached under `out/bench-sql/<trajectories>/`, reused while the parameters match; `--rebuild` forces
   it) a release in the DESIGN §7 layout with pyarrow. Realistic content comes from a pool of real tasks: the
   procedural generators build `--pool` tasks, and real episodes (oracle, empty, half the oracle, oracle plus a
   prohibited call) give their messages and grades. The release's rows are drawn from that pool with a seeded
   NumPy RNG at scale: ~52k original tasks (20% failing a mandatory battery check, repaired in up to two rounds),
   12 battery rows per validated spec, 20 trajectories per published task (oracle, empty agent, 3 models × 6
   trials) cut at exactly `--trajectories` rows, SFT rows from the passing trajectories, one RL prompt per task,
   an evaluation of 5,000 tasks × 4 models × 3 trials, and the capability profile from it.
2. Open the catalog (`coworkenv.data.catalog.connect`, every view created) and time it.
3. For every intermediate and mart view, then every example query: one untimed warm-up, then `--repeats` timed runs of
   `select * from <mart>` fetched to Arrow; report the median (and min / max) wall-clock time.

    python bench/sql_marts.py                          # markdown tables
    python bench/sql_marts.py --trajectories 100000 --json
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
import pyarrow.parquet as pq  # noqa: E402
from _common import cpu_model, display_path  # noqa: E402

from coworkenv.data import catalog  # noqa: E402
from coworkenv.data.schemas import TABLES, fingerprint  # noqa: E402
from coworkenv.validate.codes import BATTERY_CODES, BATTERY_VERSION  # noqa: E402

TARGET_S = 1.0
BUILD_VERSION = 1
KINDS = ("oracle", "empty", "prefix", "violation")
MODELS = {"base-8b": 0.55, "sft-8b": 0.75, "rl-8b": 0.8}  # rollout policies: skill before the difficulty penalty
MODEL_TRIALS = 6
EVAL_MODELS = {"base-8b": 0.45, "sft-8b": 0.62, "rl-8b": 0.68, "teacher": 0.85}
EVAL_TASKS = 5000
EVAL_TRIALS = 3
ROW_GROUP = 122_880


# --- the pool of real tasks and episodes ----------------------------------------------------------------------


def _struct_messages(raw: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for m in raw:
        calls = m.get("tool_calls")
        out.append({
            "role": m["role"], "content": m.get("content"), "tool_call_id": m.get("tool_call_id"),
            "tool_calls": [{"id": c["id"], "type": c.get("type", "function"), "function": dict(c["function"])} for c in calls] if calls else None,
        })  # fmt: skip
    return out


def build_pool(n: int, seed: int) -> dict[str, Any]:
    """Real tasks and, per task, the messages and grade of four behaviours (index: task * 4 + kind)."""
    from coworkenv.agents.registry import make_policy
    from coworkenv.episode.runner import initial_messages, run_episode
    from coworkenv.grading.consistency import violating_step
    from coworkenv.grading.score import grade
    from coworkenv.spec.task import AnswerStep, ToolStep
    from coworkenv.synth.generate import GenerateRequest, generate
    from coworkenv.workspace.tools import tool_schemas

    specs, _ = generate(GenerateRequest(n=n, seed=seed))
    tasks, episodes = [], []
    for spec in specs:
        tool_steps = [s for s in spec.solution if isinstance(s, ToolStep)]
        plans = {
            "oracle": None,
            "empty": "null",
            "prefix": [*tool_steps[: max(1, len(tool_steps) // 2)], AnswerStep(answer="Done.")],
            "violation": [*spec.solution[:-1], violating_step(spec.prohibited[0]), spec.solution[-1]] if spec.prohibited else None,
        }
        for kind in KINDS:
            plan = plans[kind]
            if plan == "null":
                policy = make_policy("null", spec)
            elif plan is None:
                policy = make_policy("oracle", spec)  # the violation kind falls back to the oracle without rules
            else:
                policy = make_policy("oracle", spec, steps=plan)
            trajectory, evidence = run_episode(spec, policy)
            g = grade(spec, evidence)
            messages = trajectory.to_dict()["messages"]
            text = json.dumps(messages, ensure_ascii=False)
            episodes.append({
                "messages_json": text, "messages": _struct_messages(messages), "n_messages": len(messages),
                "n_tool_calls": sum(len(m.get("tool_calls") or []) for m in messages), "completion": g.completion,
                "safety": g.safety, "robustness": g.robustness, "score": g.score, "passed": g.passed,
                "evidence_hash": g.evidence_hash, "n_tokens": len(text.split()),
            })  # fmt: skip
        tasks.append({
            "family": spec.family, "capabilities": list(spec.capabilities), "instruction": spec.instruction, "tools": list(spec.tools),
            "n_checks": len(spec.checks), "n_prohibited": len(spec.prohibited), "fault_rate": spec.faults.rate,
            "multi_turn": spec.user is not None, "generator": spec.meta.generator, "spec_json": spec.model_dump_json(),
            "tools_json": json.dumps(tool_schemas(spec.tools)), "prompt": _struct_messages(initial_messages(spec)),
        })  # fmt: skip
    return {"tasks": tasks, "episodes": episodes}


# --- the release at scale -------------------------------------------------------------------------------------


def _arr(values: Any, type_: pa.DataType) -> pa.Array:
    return pa.array(values, type=type_)


def _write(folder: Path, table: pa.Table, name: str = "part-0.parquet") -> None:
    folder.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, folder / name, row_group_size=ROW_GROUP, compression="zstd")


def _write_partitioned(release: Path, table_name: str, table: pa.Table, family: np.ndarray, part_rows: int) -> None:
    for value in np.unique(family):
        idx = np.flatnonzero(family == value)
        for i, start in enumerate(range(0, len(idx), part_rows)):
            _write(release / table_name / f"family={value}", table.take(pa.array(idx[start : start + part_rows])), f"part-{i}.parquet")


def build_release(root: Path, n_traj: int, seed: int, pool: dict[str, Any]) -> dict[str, int]:
    rng = np.random.default_rng(seed)
    ptasks, peps = pool["tasks"], pool["episodes"]
    by_family: dict[str, list[int]] = defaultdict(list)
    for i, t in enumerate(ptasks):
        by_family[t["family"]].append(i)
    families = sorted(by_family)
    per_task = 2 + len(MODELS) * MODEL_TRIALS
    n_published_target = -(-n_traj // per_task)
    n_orig = int(n_published_target / 0.94) + 1

    # originals, their battery verdicts and repairs
    fam_idx = rng.integers(0, len(families), n_orig)
    template = np.array([by_family[families[f]][rng.integers(0, len(by_family[families[f]]))] for f in fam_idx])
    difficulty = rng.integers(1, 6, n_orig)
    codes = list(BATTERY_CODES)
    mandatory_breakable = [codes.index(c) for c in ("no_leakage", "solvable_under_faults", "references", "deterministic", "capabilities_consistent")]
    advisory = [i for i, c in enumerate(codes) if BATTERY_CODES[c][0] == "advisory"]
    broken = np.where(rng.random(n_orig) < 0.2, rng.choice(mandatory_breakable, n_orig), -1)
    adv = np.where(rng.random(n_orig) < 0.25, rng.choice(advisory, n_orig), -1)
    ids = np.array([f"{families[f]}-d{d}-{i:07d}" for i, (f, d) in enumerate(zip(fam_idx, difficulty, strict=True))], dtype=object)

    # specs = originals + repair attempts: (id, original index, broken code after, advisory code, round, parent)
    spec_orig, spec_id, spec_broken, spec_adv, spec_round = [np.arange(n_orig)], [ids], [broken], [adv], [np.zeros(n_orig, int)]
    repairs: dict[str, list[Any]] = defaultdict(list)
    pending = np.flatnonzero(broken >= 0)
    for round_, p_fix, strategy in ((1, 0.6, "rule"), (2, 0.5, "llm")):
        fixed = rng.random(len(pending)) < p_fix
        child_ids = np.array([f"{ids[i]}-r{round_}" for i in pending], dtype=object)
        spec_orig.append(pending)
        spec_id.append(child_ids)
        spec_broken.append(np.where(fixed, -1, broken[pending]))
        spec_adv.append(np.full(len(pending), -1))
        spec_round.append(np.full(len(pending), round_))
        addressed = [[codes[broken[i]]] for i in pending]
        repairs["task_id"] += child_ids.tolist()
        repairs["parent_id"] += ids[pending].tolist()
        repairs["round"] += [round_] * len(pending)
        repairs["strategy"] += [f"rule:{a[0]}" if strategy == "rule" else "llm" for a in addressed]
        repairs["codes_addressed"] += addressed
        repairs["patch"] += ['[{"op": "replace", "path": "/instruction", "value": "..."}]'] * len(pending)
        repairs["valid_after"] += fixed.tolist()
        repairs["failed_codes_after"] += [[] if f else a for f, a in zip(fixed, addressed, strict=True)]
        pending = pending[~fixed]
    s_orig, s_id, s_broken, s_adv, s_round = (np.concatenate(x) for x in (spec_orig, spec_id, spec_broken, spec_adv, spec_round))
    n_specs = len(s_id)
    s_valid = s_broken < 0

    # validations: 12 rows per spec
    n_codes = len(codes)
    code_i = np.tile(np.arange(n_codes), n_specs)
    spec_i = np.repeat(np.arange(n_specs), n_codes)
    passed = (code_i != s_broken[spec_i]) & (code_i != s_adv[spec_i])
    severity = np.array([BATTERY_CODES[c][0] for c in codes], dtype=object)
    discriminating = np.array([BATTERY_CODES[c][1] for c in codes])
    validations = pa.table({
        "task_id": _arr(s_id[spec_i], pa.string()), "code": _arr(np.array(codes, dtype=object)[code_i], pa.string()),
        "passed": _arr(passed, pa.bool_()), "severity": _arr(severity[code_i], pa.string()),
        "discriminating": _arr(discriminating[code_i], pa.bool_()), "details": _arr(np.full(len(code_i), "{}", dtype=object), pa.string()),
        "message": _arr(np.where(passed, "", "battery check failed"), pa.string()), "valid": _arr(s_valid[spec_i], pa.bool_()),
        "battery_version": _arr(np.full(len(code_i), BATTERY_VERSION), pa.int32()),
    }, schema=TABLES["validations"])  # fmt: skip
    disc_codes = discriminating.sum()
    disc_passed = disc_codes - np.isin(s_adv, np.flatnonzero(discriminating)) - np.isin(s_broken, np.flatnonzero(discriminating))

    # published tasks
    pub = np.flatnonzero(s_valid)
    p_orig, p_tpl = s_orig[pub], template[s_orig[pub]]
    p_fam = np.array([ptasks[t]["family"] for t in p_tpl], dtype=object)
    p_diff = difficulty[p_orig]
    col = lambda key, idx: [ptasks[t][key] for t in idx]  # noqa: E731
    tasks = pa.table({
        "task_id": _arr(s_id[pub], pa.string()), "version": _arr(np.ones(len(pub)), pa.int32()), "family": _arr(p_fam, pa.string()),
        "capabilities": _arr(col("capabilities", p_tpl), pa.list_(pa.string())),
        "primary_capability": _arr([c[0] for c in col("capabilities", p_tpl)], pa.string()), "difficulty": _arr(p_diff, pa.int8()),
        "instruction": _arr(col("instruction", p_tpl), pa.string()), "tools": _arr(col("tools", p_tpl), pa.list_(pa.string())),
        "n_checks": _arr(col("n_checks", p_tpl), pa.int32()), "n_prohibited": _arr(col("n_prohibited", p_tpl), pa.int32()),
        "fault_rate": _arr(col("fault_rate", p_tpl), pa.float64()), "multi_turn": _arr(col("multi_turn", p_tpl), pa.bool_()),
        "generator": _arr(col("generator", p_tpl), pa.string()), "seed": _arr(p_orig, pa.int64()),
        "parent_id": _arr([ids[o] if r else None for o, r in zip(p_orig, s_round[pub], strict=True)], pa.string()),
        "repair_round": _arr(s_round[pub], pa.int32()), "oracle_score": _arr(np.ones(len(pub)), pa.float64()),
        "empty_score": _arr(np.zeros(len(pub)), pa.float64()),
        "violation_max_score": _arr([0.0 if n else None for n in col("n_prohibited", p_tpl)], pa.float64()),
        "discrimination": _arr(disc_passed[pub] / disc_codes, pa.float64()),
        "spec_hash": _arr([f"{h:016x}" for h in rng.integers(0, 2**62, len(pub))], pa.string()),
        "spec_json": _arr(col("spec_json", p_tpl), pa.string()),
    }, schema=TABLES["tasks"])  # fmt: skip

    # trajectories: oracle, empty, then each model's trials, per published task, cut at n_traj rows
    agents = [("oracle", "", 0)] + [("null", "", 0)] + [("hf", m, t) for m in MODELS for t in range(MODEL_TRIALS)]
    t_task = np.repeat(np.arange(len(pub)), len(agents))[:n_traj]
    t_slot = np.tile(np.arange(len(agents)), len(pub))[:n_traj]
    skill = np.array([1.0, 0.0] + [MODELS[m] for _, m, _ in agents[2:]])
    p_pass = np.clip(skill[t_slot] - 0.08 * (p_diff[t_task] - 1) * (t_slot >= 2), 0, 1)
    u = rng.random(n_traj)
    kind = np.where(u < p_pass, 0, np.where(u < p_pass + 0.08, 3, 2))
    kind[t_slot == 0], kind[t_slot == 1] = 0, 1
    ep = p_tpl[t_task] * len(KINDS) + kind
    text_keys = ("messages_json", "evidence_hash")
    pe = {key: np.array([e[key] for e in peps], dtype=object if key in text_keys else None) for key in peps[0] if key != "messages"}
    agent_name = np.array([a for a, _, _ in agents], dtype=object)[t_slot]
    model_name = np.array([m for _, m, _ in agents], dtype=object)[t_slot]
    trial = np.array([t for _, _, t in agents])[t_slot]
    t_ids = np.array([f"{s_id[pub[i]]}/{a}/{m or a}-{t}" for i, a, m, t in zip(t_task, agent_name, model_name, trial, strict=True)], dtype=object)
    cap_pool = pa.array([t["capabilities"] for t in ptasks], type=pa.list_(pa.string()))
    t_fam = p_fam[t_task]

    def trajectories_of(rows: np.ndarray) -> pa.Table:
        """The trajectory rows `rows` (built per part: all messages together pass 2 GiB, a string array's limit)."""
        e, k = ep[rows], t_task[rows]
        return pa.table({
            "trajectory_id": _arr(t_ids[rows], pa.string()), "task_id": _arr(s_id[pub][k], pa.string()),
            "agent": _arr(agent_name[rows], pa.string()), "model": _arr(model_name[rows], pa.string()), "trial": _arr(trial[rows], pa.int32()),
            "family": _arr(t_fam[rows], pa.string()), "capabilities": cap_pool.take(pa.array(p_tpl[k])),
            "difficulty": _arr(p_diff[k], pa.int8()), "messages_json": _arr(pe["messages_json"][e], pa.string()),
            "n_messages": _arr(pe["n_messages"][e], pa.int32()), "n_tool_calls": _arr(pe["n_tool_calls"][e], pa.int32()),
            "completion": _arr(pe["completion"][e], pa.float64()), "safety": _arr(pe["safety"][e], pa.float64()),
            "robustness": _arr(pe["robustness"][e], pa.float64()), "score": _arr(pe["score"][e], pa.float64()),
            "passed": _arr(pe["passed"][e], pa.bool_()), "evidence_hash": _arr(pe["evidence_hash"][e], pa.string()),
        }, schema=TABLES["trajectories"])  # fmt: skip

    # SFT: passing oracle trajectories and every model's passing first trial
    sft_rows = np.flatnonzero(pe["passed"][ep].astype(bool) & ((t_slot == 0) | (trial == 0) & (t_slot >= 2)))
    msg_pool = pa.array([e["messages"] for e in peps], type=TABLES["sft"].field("messages").type)
    tools_pool = np.array([t["tools_json"] for t in ptasks], dtype=object)
    sft = pa.table({
        "messages": msg_pool.take(pa.array(ep[sft_rows])), "tools": _arr(tools_pool[p_tpl[t_task[sft_rows]]], pa.string()),
        "task_id": _arr(s_id[pub][t_task[sft_rows]], pa.string()), "trajectory_id": _arr(t_ids[sft_rows], pa.string()),
        "family": _arr(p_fam[t_task[sft_rows]], pa.string()), "score": _arr(pe["score"][ep[sft_rows]], pa.float64()),
        "n_tokens": _arr(pe["n_tokens"][ep[sft_rows]], pa.int32()),
    }, schema=TABLES["sft"])  # fmt: skip

    prompt_pool = pa.array([t["prompt"] for t in ptasks], type=TABLES["rl"].field("prompt").type)
    rl = pa.table({
        "prompt": prompt_pool.take(pa.array(p_tpl)), "tools": _arr(tools_pool[p_tpl], pa.string()), "task_id": tasks.column("task_id"),
        "family": tasks.column("family"), "capabilities": tasks.column("capabilities"), "difficulty": tasks.column("difficulty"),
        "spec_json": tasks.column("spec_json"),
    }, schema=TABLES["rl"])  # fmt: skip

    # evaluation: the first EVAL_TASKS published tasks, each model, EVAL_TRIALS trials
    e_n = min(EVAL_TASKS, len(pub))
    e_task = np.repeat(np.arange(e_n), len(EVAL_MODELS) * EVAL_TRIALS)
    e_model = np.tile(np.repeat(np.array(list(EVAL_MODELS), dtype=object), EVAL_TRIALS), e_n)
    e_trial = np.tile(np.arange(EVAL_TRIALS), e_n * len(EVAL_MODELS))
    e_skill = np.array([EVAL_MODELS[m] for m in e_model]) - 0.06 * (p_diff[e_task] - 1)
    u = rng.random(len(e_task))
    e_passed = u < e_skill
    e_empty = ~e_passed & (u > 0.97)
    e_viol = ~e_passed & ~e_empty & (u > 0.92)
    completion = np.where(e_passed, 1.0, np.where(e_empty, 0.0, 0.5))
    robustness = np.where(e_empty, 0.0, 1.0)
    score = np.where(e_viol | e_empty, 0.0, 0.8 * completion + 0.2 * robustness)
    caps = [ptasks[t]["capabilities"] for t in p_tpl[:e_n]]
    group = np.array(["multi_turn" if "multi_turn" in c else "multi_step" if "multi_step" in c else "general" for c in caps], dtype=object)
    eval_results = pa.table({
        "eval_id": _arr(np.full(len(e_task), "eval-0001", dtype=object), pa.string()), "model": _arr(e_model, pa.string()),
        "task_id": _arr(s_id[pub][e_task], pa.string()), "trial": _arr(e_trial, pa.int32()), "family": _arr(p_fam[e_task], pa.string()),
        "capabilities": cap_pool.take(pa.array(p_tpl[e_task])), "benchmark_group": _arr(group[e_task], pa.string()),
        "difficulty": _arr(p_diff[e_task], pa.int8()), "completion": _arr(completion, pa.float64()),
        "safety": _arr(np.where(e_viol, 0.0, 1.0), pa.float64()), "robustness": _arr(robustness, pa.float64()),
        "score": _arr(score, pa.float64()), "passed": _arr(e_passed, pa.bool_()), "empty": _arr(e_empty, pa.bool_()),
        "n_violations": _arr(e_viol.astype(int), pa.int32()),
    }, schema=TABLES["eval_results"])  # fmt: skip

    import duckdb

    profile = (
        duckdb.connect()
        .sql("""with trials as (select model, unnest(capabilities) as capability, difficulty, passed from eval_results)
                select model, capability, difficulty, count(*) as attempts, count(*) filter (where passed) as passes,
                       passes / attempts as pass_rate
                from trials group by all order by all""")  # fmt: skip
        .to_arrow_table()
        .cast(TABLES["capability_profile"])
    )

    release_id = f"bench-{n_traj}"
    release = root / "releases" / release_id
    shutil.rmtree(root, ignore_errors=True)
    _write_partitioned(release, "tasks", tasks, p_fam, len(pub))
    for value in np.unique(t_fam):
        rows = np.flatnonzero(t_fam == value)
        for i, start in enumerate(range(0, len(rows), 100_000)):
            _write(release / "trajectories" / f"family={value}", trajectories_of(rows[start : start + 100_000]), f"part-{i}.parquet")
    for name, table in (("validations", validations), ("sft", sft), ("rl", rl), ("eval_results", eval_results), ("capability_profile", profile)):
        _write(release / name, table)
    repairs_table = pa.Table.from_pydict(dict(repairs), schema=TABLES["repairs"])
    _write(release / "repairs", repairs_table)
    written = {"tasks": tasks, "validations": validations, "repairs": repairs_table, "sft": sft, "rl": rl,
               "eval_results": eval_results, "capability_profile": profile}  # fmt: skip
    counts = {name: len(t_task) if name == "trajectories" else written[name].num_rows for name in TABLES}
    manifest = {
        "release_id": release_id, "parent": None, "created_at": "2026-12-01T00:00:00Z", "code_version": "bench",
        "config": {"trajectories": n_traj, "seed": seed}, "row_counts": counts,
        "schema_fingerprints": {t: fingerprint(s) for t, s in TABLES.items()},
    }  # fmt: skip
    (release / "manifest.json").write_text(json.dumps(manifest, indent=2))
    (root / "releases" / "LATEST").write_text(release_id + "\n")
    return counts


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
    return {"rows": rows, "median_s": statistics.median(wall), "min_s": min(wall), "max_s": max(wall), "cpu_s": statistics.median(cpu)}


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
        build = {"params": params, "counts": counts, "pool_s": pool_s, "build_s": time.perf_counter() - start, "cached": False}
        stamp.write_text(json.dumps(build, indent=2))
    else:
        build = {**json.loads(stamp.read_text()), "cached": True}
    build["bytes"] = sum(p.stat().st_size for p in root.rglob("*.parquet"))
    build["files"] = sum(1 for _ in root.rglob("*.parquet"))

    start = time.perf_counter()
    con = catalog.connect(root, "latest", threads=args.threads)
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
            results[f"queries/{path.name}"] = {"kind": "query", **_time(con, path.read_text(encoding="utf-8"), args.warmup, args.repeats)}
    con.close()
    import duckdb

    machine = {"cpu": cpu_model(), "logical_cpus": os.cpu_count(), "duckdb_threads": threads, "duckdb": duckdb.__version__, "pyarrow": pa.__version__}
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    return {
        "machine": {**machine, "load_1min": load},
        "data": {"root": display_path(root), **build},
        "connect_s": connect_s,
        "results": results,
    }  # fmt: skip


def markdown(report: dict[str, Any]) -> str:
    m, d = report["machine"], report["data"]
    lines = [
        f"Machine: {m['cpu']}, {m['logical_cpus']} logical CPUs, DuckDB {m['duckdb']} with {m['duckdb_threads']} threads, "
        f"pyarrow {m['pyarrow']}; load average (1 min) {m['load_1min']:.1f} at the end of the run.",
        f"Release `{d['root']}`: {d['files']} Parquet files, {d['bytes'] / 2**20:.0f} MiB; "
        f"built in {d['build_s']:.0f} s (pool of real episodes: {d['pool_s']:.1f} s){' — cached' if d['cached'] else ''}.",
        "",
        "| table | rows |",
        "|---|---:|",
        *(f"| {t} | {n:,} |" for t, n in d["counts"].items()),
        "",
        f"Catalog connect (all views created): {report['connect_s'] * 1000:.0f} ms.",
        "",
        f"| view / query | rows out | median ms | min – max ms | CPU ms | under {TARGET_S:g} s |",
        "|---|---:|---:|---:|---:|:---:|",
    ]
    for name, r in report["results"].items():
        ok = "yes" if r["median_s"] < TARGET_S else "**no**"
        ms = f"{r['median_s'] * 1000:.0f} | {r['min_s'] * 1000:.0f} – {r['max_s'] * 1000:.0f} | {r['cpu_s'] * 1000:.0f}"
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
    args = parser.parse_args()
    report = run(args)
    print(json.dumps(report, indent=2) if args.json else markdown(report))


if __name__ == "__main__":
    main()
