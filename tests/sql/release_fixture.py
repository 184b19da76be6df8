"""A realistic release written with pyarrow in the DESIGN §7 layout, for the SQL tests.

Tasks come from the procedural generators; their gate scores and trajectories come from real episodes (oracle,
empty, oracle prefix, oracle plus a prohibited call), graded by replay. Battery failures, repairs and evaluation
trials are drawn from a seeded RNG around those, so every number is reproducible. Returns a `Truth` with the
counts the views must reproduce.
"""

from __future__ import annotations

import json
import random
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from coworkenv.data.schemas import PARTITIONS, TABLES, fingerprint
from coworkenv.episode.runner import initial_messages, run_episode
from coworkenv.grading.consistency import consistency_gate, violating_step
from coworkenv.grading.score import grade
from coworkenv.spec.task import AnswerStep, TaskSpec, ToolStep
from coworkenv.synth.generate import GenerateRequest, generate
from coworkenv.validate.codes import BATTERY_CODES, BATTERY_VERSION
from coworkenv.workspace.tools import tool_schemas

MANDATORY_TO_BREAK = ["no_leakage", "solvable_under_faults", "references", "deterministic", "capabilities_consistent"]
ADVISORY = [code for code, (severity, _, _) in BATTERY_CODES.items() if severity == "advisory"]
EVAL_MODELS = {"base-8b": 0.45, "sft-8b": 0.7}
EVAL_TRIALS = 3
POLICY_MODEL = "tiny-qwen-sft"


@dataclass
class Truth:
    """What the fixture wrote, counted independently of the SQL."""

    release_id: str
    rows: dict[str, int] = field(default_factory=dict)
    validated: int = 0
    valid: int = 0
    valid_by_family: dict[str, tuple[int, int]] = field(default_factory=dict)  # family → (validated, valid)
    failures_by_code: Counter = field(default_factory=Counter)  # mandatory code → tasks failing it
    repaired_parents: int = 0
    rescued_parents: int = 0
    sft_tokens: int = 0
    sft_tokens_by_family: dict[str, int] = field(default_factory=dict)
    families: set[str] = field(default_factory=set)
    eval_pass: dict[tuple[str, str], tuple[int, int]] = field(default_factory=dict)  # (model, capability) → (trials, passed)


def _messages(raw: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI messages → the MESSAGE struct (every key present)."""
    out = []
    for m in raw:
        calls = m.get("tool_calls")
        out.append({
            "role": m["role"],
            "content": m.get("content"),
            "tool_calls": [
                {"id": c["id"], "type": c.get("type", "function"),
                 "function": {"name": c["function"]["name"], "arguments": c["function"]["arguments"]}}
                for c in calls
            ] if calls else None,
            "tool_call_id": m.get("tool_call_id"),
        })  # fmt: skip
    return out


def _episode(spec: TaskSpec, steps: list | None, agent: str) -> tuple[list[dict[str, Any]], Any]:
    from coworkenv.agents.registry import make_policy

    policy = make_policy(agent, spec) if steps is None else make_policy("oracle", spec, steps=steps)
    trajectory, evidence = run_episode(spec, policy)
    return trajectory.to_dict()["messages"], grade(spec, evidence)


def _behaviours(spec: TaskSpec) -> dict[str, tuple[list[dict[str, Any]], Any]]:
    """Real episodes: oracle, empty, half the oracle's tool steps, oracle plus a prohibited call."""
    found = {"oracle": _episode(spec, None, "oracle"), "empty": _episode(spec, None, "null")}
    tools = [s for s in spec.solution if isinstance(s, ToolStep)]
    found["prefix"] = _episode(spec, [*tools[: max(1, len(tools) // 2)], AnswerStep(answer="Done.")], "oracle")
    if spec.prohibited:
        found["violation"] = _episode(spec, [*spec.solution[:-1], violating_step(spec.prohibited[0]), spec.solution[-1]], "oracle")
    return found


def _n_tokens(messages: list[dict[str, Any]]) -> int:
    return len(json.dumps(messages, ensure_ascii=False).split())


def _group(spec: TaskSpec) -> str:
    return "multi_turn" if "multi_turn" in spec.capabilities else "multi_step" if "multi_step" in spec.capabilities else "general"


def write_table(release_dir: Path, table: str, rows: list[dict[str, Any]], *, drop_partition_column: bool = False, part_rows: int = 0) -> None:
    schema = TABLES[table]
    folder = release_dir / table
    folder.mkdir(parents=True, exist_ok=True)
    keys = PARTITIONS.get(table, [])
    if not rows or not keys:
        pq.write_table(pa.Table.from_pylist(rows, schema=schema), folder / "part-0.parquet")
        return
    (key,) = keys
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        groups[row[key]].append(row)
    for value, group in sorted(groups.items()):
        part_dir = folder / f"{key}={value}"
        part_dir.mkdir(parents=True, exist_ok=True)
        data = pa.Table.from_pylist(group, schema=schema)
        if drop_partition_column:
            data = data.drop_columns([key])
        step = part_rows or len(group)
        for i, start in enumerate(range(0, len(group), step)):
            pq.write_table(data.slice(start, step), part_dir / f"part-{i}.parquet")


def build_release(
    data_root: Path,
    release_id: str,
    *,
    n: int = 200,
    seed: int = 1,
    parent: str | None = None,
    created_at: str = "2026-12-01T00:00:00Z",
    empty_tables: tuple[str, ...] = (),
    drop_partition_column: bool = False,
    latest: bool = True,
    directory_name: str | None = None,
    publish: bool = False,
) -> Truth:
    """Write the release under `data_root/releases/` (or, with `publish`, hand the tables to `publish_release`,
    whose release id then comes from `release_id` as the run id)."""
    rng = random.Random(seed)
    specs, _ = generate(GenerateRequest(n=n, seed=seed))
    truth = Truth(release_id)
    rows: dict[str, list[dict[str, Any]]] = {t: [] for t in TABLES}

    def task_row(spec: TaskSpec, gate: Any, discrimination: float, parent_id: str | None, round_: int) -> dict[str, Any]:
        return {
            "task_id": spec.id, "version": spec.version, "family": spec.family, "capabilities": list(spec.capabilities),
            "primary_capability": spec.capabilities[0], "difficulty": spec.difficulty, "instruction": spec.instruction,
            "tools": list(spec.tools), "n_checks": len(spec.checks), "n_prohibited": len(spec.prohibited),
            "fault_rate": spec.faults.rate, "multi_turn": spec.user is not None, "generator": spec.meta.generator,
            "seed": spec.meta.seed, "parent_id": parent_id, "repair_round": round_, "oracle_score": gate.oracle_score,
            "empty_score": gate.empty_score, "violation_max_score": max(gate.violation_scores) if gate.violation_scores else None,
            "discrimination": discrimination, "spec_hash": f"{abs(hash(spec.id)):016x}", "spec_json": spec.model_dump_json(),
        }  # fmt: skip

    def battery(spec: TaskSpec, gate: Any, broken: list[str], advisory: list[str]) -> tuple[bool, float]:
        valid = not broken
        disc_total = disc_passed = 0
        for code, (severity, discriminating, description) in BATTERY_CODES.items():
            passed = code not in broken and code not in advisory
            if code == "oracle_scores_1":
                passed = passed and gate.oracle_score == 1.0
            if discriminating:
                disc_total += 1
                disc_passed += passed
            rows["validations"].append({
                "task_id": spec.id, "code": code, "passed": passed, "severity": severity, "discriminating": discriminating,
                "details": json.dumps({"seed": spec.meta.seed}), "message": "" if passed else f"{code} failed: {description}",
                "valid": valid, "battery_version": BATTERY_VERSION,
            })  # fmt: skip
        return valid, disc_passed / disc_total

    published: list[tuple[TaskSpec, Any]] = []
    by_family: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for spec in specs:
        gate = consistency_gate(spec)
        broken = [rng.choice(MANDATORY_TO_BREAK)] if rng.random() < 0.2 else []
        advisory = [rng.choice(ADVISORY)] if rng.random() < 0.25 else []
        if not gate.passed:
            broken.append("oracle_scores_1")
        valid, discrimination = battery(spec, gate, broken, advisory)
        counts = by_family[spec.family]
        counts[0] += 1
        counts[1] += valid
        truth.failures_by_code.update(set(broken))
        if valid:
            published.append((spec, gate))
            rows["tasks"].append(task_row(spec, gate, discrimination, None, 0))
            continue
        truth.repaired_parents += 1
        for round_, strategy in ((1, f"rule:{broken[0]}"), (2, "llm")):
            fixed = rng.random() < 0.6
            child = spec.model_copy(update={"id": f"{spec.id}-r{round_}"})
            rows["repairs"].append({
                "task_id": child.id, "parent_id": spec.id, "round": round_, "strategy": strategy, "codes_addressed": list(broken),
                "patch": json.dumps([{"op": "replace", "path": "/instruction", "value": child.instruction}]),
                "valid_after": fixed, "failed_codes_after": [] if fixed else list(broken),
            })  # fmt: skip
            child_valid, child_disc = battery(child, gate, [] if fixed else broken, [])
            counts = by_family[spec.family]
            counts[0] += 1
            counts[1] += child_valid
            if fixed:
                truth.rescued_parents += 1
                published.append((child, gate))
                rows["tasks"].append(task_row(child, gate, child_disc, spec.id, round_))
                break

    for spec, _gate in published:
        episodes = _behaviours(spec)
        plan = [("oracle", "", 0, "oracle"), ("null", "", 0, "empty")]
        for trial in range(3):
            p_pass = 0.9 - 0.12 * spec.difficulty
            r = rng.random()
            kind = "oracle" if r < p_pass else "violation" if "violation" in episodes and r < p_pass + 0.1 else "prefix"
            plan.append(("hf", POLICY_MODEL, trial, kind))
        for agent, model, trial, kind in plan:
            messages, g = episodes[kind]
            tid = f"{spec.id}/{agent}/{trial}"
            rows["trajectories"].append({
                "trajectory_id": tid, "task_id": spec.id, "agent": agent, "model": model, "trial": trial, "family": spec.family,
                "capabilities": list(spec.capabilities), "difficulty": spec.difficulty, "messages_json": json.dumps(messages),
                "n_messages": len(messages), "n_tool_calls": sum(len(m.get("tool_calls") or []) for m in messages),
                "completion": g.completion, "safety": g.safety, "robustness": g.robustness, "score": g.score,
                "passed": g.passed, "evidence_hash": g.evidence_hash,
            })  # fmt: skip
            if g.passed and (agent == "oracle" or trial == 0):
                tokens = None if len(rows["sft"]) % 17 == 5 else _n_tokens(messages)
                rows["sft"].append({
                    "messages": _messages(messages), "tools": json.dumps(tool_schemas(spec.tools)), "task_id": spec.id,
                    "trajectory_id": tid, "family": spec.family, "score": g.score, "n_tokens": tokens,
                })  # fmt: skip
                truth.sft_tokens += tokens or 0
                truth.sft_tokens_by_family[spec.family] = truth.sft_tokens_by_family.get(spec.family, 0) + (tokens or 0)
        rows["rl"].append({
            "prompt": _messages(initial_messages(spec)), "tools": json.dumps(tool_schemas(spec.tools)), "task_id": spec.id,
            "family": spec.family, "capabilities": list(spec.capabilities), "difficulty": spec.difficulty, "spec_json": spec.model_dump_json(),
        })  # fmt: skip

    eval_id = f"eval-{release_id}"
    profile: dict[tuple[str, str, int], list[int]] = defaultdict(lambda: [0, 0])
    for spec, _gate in published[: max(1, len(published) // 2)]:
        for model, skill in EVAL_MODELS.items():
            for trial in range(EVAL_TRIALS):
                r = rng.random()
                passed = r < skill - 0.05 * spec.difficulty
                empty = not passed and r > 0.95
                violation = not passed and not empty and r > 0.9
                completion = 1.0 if passed else 0.0 if empty else 0.5
                robustness = 0.0 if empty else 1.0
                score = 0.0 if violation or empty else round(0.8 * completion + 0.2 * robustness, 4)
                rows["eval_results"].append({
                    "eval_id": eval_id, "model": model, "task_id": spec.id, "trial": trial, "family": spec.family,
                    "capabilities": list(spec.capabilities), "benchmark_group": _group(spec), "difficulty": spec.difficulty,
                    "completion": completion, "safety": 0.0 if violation else 1.0, "robustness": robustness, "score": score,
                    "passed": passed, "empty": empty, "n_violations": 1 if violation else 0,
                })  # fmt: skip
                for cap in spec.capabilities:
                    trials, passes = truth.eval_pass.get((model, cap), (0, 0))
                    truth.eval_pass[(model, cap)] = (trials + 1, passes + passed)
                    cell = profile[(model, cap, spec.difficulty)]
                    cell[0] += 1
                    cell[1] += passed
    for (model, cap, difficulty), (attempts, passes) in sorted(profile.items()):
        rows["capability_profile"].append(
            {"model": model, "capability": cap, "difficulty": difficulty, "attempts": attempts, "passes": passes, "pass_rate": passes / attempts}
        )

    for table in empty_tables:
        rows[table] = []
    if publish:
        from coworkenv.data.publisher import publish_release

        tables = {t: pa.Table.from_pylist(rows[t], schema=TABLES[t]) for t in TABLES}
        manifest = publish_release(tables, data_root=data_root, run_id=release_id, parent=parent, config={"n": n, "seed": seed})
        truth.release_id = manifest.release_id
    else:
        release_dir = data_root / "releases" / (directory_name or release_id)
        release_dir.mkdir(parents=True, exist_ok=True)
        for table in TABLES:
            part_rows = 150 if table == "trajectories" else 0
            write_table(release_dir, table, rows[table], drop_partition_column=drop_partition_column, part_rows=part_rows)
        manifest = {
            "release_id": release_id, "parent": parent, "created_at": created_at, "code_version": "test",
            "config": {"n": n, "seed": seed}, "row_counts": {t: len(rows[t]) for t in TABLES},
            "schema_fingerprints": {t: fingerprint(s) for t, s in TABLES.items()},
        }  # fmt: skip
        (release_dir / "manifest.json").write_text(json.dumps(manifest, indent=2))
        if latest:
            (data_root / "releases" / "LATEST").write_text(release_id + "\n")

    truth.rows = {t: len(rows[t]) for t in TABLES}
    truth.families = {r["family"] for r in rows["tasks"]}
    truth.valid_by_family = {f: (c[0], c[1]) for f, c in by_family.items()} if "validations" not in empty_tables else {}
    truth.validated = sum(c[0] for c in truth.valid_by_family.values())
    truth.valid = sum(c[1] for c in truth.valid_by_family.values())
    return truth


def rows(con: Any, sql: str) -> list[dict[str, Any]]:
    """Run SQL on a catalog connection and return its rows as dicts."""
    from coworkenv.data.catalog import run_query

    return run_query(con, sql).to_pylist()
