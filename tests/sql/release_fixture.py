"""Releases for the SQL tests, made as the pipeline makes them: tables from the release builder
(`coworkenv.data.build.release_tables`), published by `coworkenv.data.publisher.publish_release`.

Tasks come from the procedural generators; their gate scores and trajectories come from real episodes (oracle and
empty rollouts, plus a policy's trials played as the oracle, half the oracle or the oracle with a prohibited call),
graded by replay. Battery verdicts, repairs and evaluation trials are drawn from a seeded RNG around those, so every
number is reproducible. `publish` returns a `Truth`: what the release holds, counted from the domain objects and
the built tables, never through SQL.
"""

from __future__ import annotations

import random
import shutil
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from coworkenv.data.build import capability_profile_table, eval_results_table, release_tables, trajectory_row
from coworkenv.data.publisher import publish_release
from coworkenv.grading.consistency import ConsistencyVerdict, consistency_gate, with_violation
from coworkenv.grading.play import ANSWER_ONLY_TEXT, play
from coworkenv.repair.loop import with_lineage
from coworkenv.rollout import rollout_row
from coworkenv.spec.task import AnswerStep, TaskSpec, ToolStep
from coworkenv.spec.verdict import CheckOutcome, TaskValidation
from coworkenv.synth.generate import GenerateRequest, generate
from coworkenv.validate.codes import BATTERY_CODES

MANDATORY_TO_BREAK = ["no_leakage", "solvable_under_faults", "references", "deterministic", "capabilities_consistent"]
ADVISORY = [code for code, (severity, _, _) in BATTERY_CODES.items() if severity == "advisory"]
EVAL_MODELS = {"base-8b": 0.45, "sft-8b": 0.7}
EVAL_TRIALS = 3
POLICY_MODEL = "tiny-qwen-sft"
POLICY_TRIALS = 3


@dataclass
class Truth:
    """What the fixture published, counted independently of the SQL."""

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
    eval_pass: dict[tuple[str, str], tuple[int, int]] = field(
        default_factory=dict
    )  # (model, capability) → (trials, passed)


class Releases:
    """The session's data root and what its two releases hold."""

    def __init__(self, root: Path, r1: Truth, r2: Truth):
        self.root = root
        self.r1 = r1
        self.r2 = r2

    def path(self, truth: Truth) -> Path:
        return self.root / "releases" / truth.release_id

    def copy(self, truth: Truth, root: Path, *, latest: bool = True) -> Path:
        """Copy one release into the data root `root` (and point `LATEST` at it unless told not to); its directory."""
        target = root / "releases" / truth.release_id
        shutil.copytree(self.path(truth), target)
        if latest:
            (root / "releases" / "LATEST").write_text(truth.release_id + "\n")
        return target


def verdict(spec: TaskSpec, gate: ConsistencyVerdict, broken: list[str], advisory: list[str]) -> TaskValidation:
    """The battery's verdict with the `broken` (mandatory) and `advisory` codes failing; the gate's scores sit in the
    details where the battery records them, for the builder to read back."""
    results = []
    for code, (severity, discriminating, description) in BATTERY_CODES.items():
        passed = code not in broken and code not in advisory
        details: dict[str, Any] = {"seed": spec.meta.seed}
        if code == "oracle_scores_1":
            passed = passed and gate.oracle_score == 1.0
            details["score"] = gate.oracle_score
        elif code == "empty_scores_0":
            details["score"] = gate.empty_score
        elif code == "prohibited_zeroes":
            details["rules"] = [{"rule": i, "score": score} for i, score in enumerate(gate.violation_scores)]
        message = "" if passed else f"{code} failed: {description}"
        results.append(
            CheckOutcome(
                task_id=spec.id,
                code=code,
                passed=passed,
                severity=severity,
                discriminating=discriminating,
                details=details,
                message=message,
            )
        )
    scored = [r.passed for r in results if r.discriminating]
    return TaskValidation(task_id=spec.id, valid=not broken, discrimination=sum(scored) / len(scored), results=results)


def repair(
    spec: TaskSpec, round_: int, strategy: str, codes: list[str], fixed: bool
) -> tuple[TaskSpec, dict[str, Any]]:
    """A repaired spec with the repair loop's lineage (a one-operation patch to the instruction) and its attempt row."""
    original = spec.model_dump(mode="json", by_alias=True)
    patched = {**original, "instruction": f"{spec.instruction} (Repair round {round_}.)"}
    child = TaskSpec.model_validate(with_lineage(patched, original, spec.id, round_, strategy))
    attempt = {
        "task_id": child.id,
        "parent_id": spec.id,
        "round": round_,
        "strategy": strategy,
        "codes_addressed": list(codes),
        "patch": (child.meta.model_extra or {})["repair"]["patch"],
        "valid_after": fixed,
        "failed_codes_after": [] if fixed else list(codes),
    }
    return child, attempt


def rollouts(spec: TaskSpec, rng: random.Random) -> list[dict[str, Any]]:
    """The oracle's and the empty agent's rollouts, then `POLICY_TRIALS` trials of a policy that passes less often on
    harder tasks: each trial replays the oracle, half of its tool steps, or the oracle plus a prohibited call."""
    rows = [rollout_row(spec, "oracle"), rollout_row(spec, "null")]
    tools = [s for s in spec.solution if isinstance(s, ToolStep)]
    plays = {"oracle": None, "prefix": [*tools[: max(1, len(tools) // 2)], AnswerStep(answer=ANSWER_ONLY_TEXT)]}
    if spec.prohibited:
        plays["violation"] = with_violation(spec, spec.prohibited[0])
    for trial in range(POLICY_TRIALS):
        p_pass = 0.9 - 0.12 * spec.difficulty
        r = rng.random()
        kind = "oracle" if r < p_pass else "violation" if "violation" in plays and r < p_pass + 0.1 else "prefix"
        run = play(spec, plays[kind])
        rows.append(trajectory_row(spec, run.trajectory, run.grade, agent="hf", model=POLICY_MODEL, trial=trial))
    return rows


def evaluation(specs: list[TaskSpec], rng: random.Random, eval_id: str, truth: Truth) -> tuple[pa.Table, pa.Table]:
    """`EVAL_TRIALS` graded trials per model on the first half of the tasks, and the capability profile they give."""
    results = []
    profile: dict[tuple[str, str, int], list[int]] = defaultdict(lambda: [0, 0])
    for spec in specs[: max(1, len(specs) // 2)]:
        for model, skill in EVAL_MODELS.items():
            for trial in range(EVAL_TRIALS):
                r = rng.random()
                passed = r < skill - 0.05 * spec.difficulty
                empty = not passed and r > 0.95
                violation = not passed and not empty and r > 0.9
                completion = 1.0 if passed else 0.0 if empty else 0.5
                robustness = 0.0 if empty else 1.0
                score = 0.0 if violation or empty else round(0.8 * completion + 0.2 * robustness, 4)
                results.append(
                    {
                        "eval_id": eval_id,
                        "model": model,
                        "task_id": spec.id,
                        "trial": trial,
                        "family": spec.family,
                        "capabilities": list(spec.capabilities),
                        "difficulty": spec.difficulty,
                        "completion": completion,
                        "safety": 0.0 if violation else 1.0,
                        "robustness": robustness,
                        "score": score,
                        "passed": passed,
                        "empty": empty,
                        "n_violations": 1 if violation else 0,
                    }
                )
                for cap in spec.capabilities:
                    trials, passes = truth.eval_pass.get((model, cap), (0, 0))
                    truth.eval_pass[(model, cap)] = (trials + 1, passes + passed)
                    cell = profile[(model, cap, spec.difficulty)]
                    cell[0] += 1
                    cell[1] += passed
    cells = [
        {"model": m, "capability": c, "difficulty": d, "attempts": a, "passes": p}
        for (m, c, d), (a, p) in sorted(profile.items())
    ]
    return eval_results_table(results), capability_profile_table(cells)


def publish(
    data_root: Path,
    run_id: str,
    *,
    n: int,
    seed: int,
    parent: str | None = None,
    rollout: bool = True,
    profile: bool = True,
) -> Truth:
    """Generate, judge, repair, roll out and evaluate `n` tasks; build the tables and publish them as run `run_id`.

    Without `rollout` the release has no trajectories (hence no SFT rows); without `profile` no capability profile."""
    rng = random.Random(seed)
    specs, _ = generate(GenerateRequest(n=n, seed=seed))
    truth = Truth(run_id)
    verdicts: dict[str, TaskValidation] = {}
    judged: list[TaskSpec] = []
    attempts: list[dict[str, Any]] = []
    by_family: dict[str, list[int]] = defaultdict(lambda: [0, 0])

    def judge(spec: TaskSpec, gate: ConsistencyVerdict, broken: list[str], advisory: list[str]) -> bool:
        verdicts[spec.id] = verdict(spec, gate, broken, advisory)
        judged.append(spec)
        counts = by_family[spec.family]
        counts[0] += 1
        counts[1] += verdicts[spec.id].valid
        return verdicts[spec.id].valid

    for spec in specs:
        gate = consistency_gate(spec)
        broken = [rng.choice(MANDATORY_TO_BREAK)] if rng.random() < 0.2 else []
        advisory = [rng.choice(ADVISORY)] if rng.random() < 0.25 else []
        if not gate.passed:
            broken.append("oracle_scores_1")
        truth.failures_by_code.update(set(broken))
        if judge(spec, gate, broken, advisory):
            continue
        truth.repaired_parents += 1
        for round_, strategy in ((1, f"rule:{broken[0]}"), (2, "llm")):
            fixed = rng.random() < 0.6
            child, attempt = repair(spec, round_, strategy, broken, fixed)
            attempts.append(attempt)
            if judge(child, gate, [] if fixed else broken, []):
                truth.rescued_parents += 1
                break

    published = [spec for spec in judged if verdicts[spec.id].valid]
    trajectories = [row for spec in published for row in rollouts(spec, rng)] if rollout else []
    eval_results, capability_profile = evaluation(published, rng, f"eval-{run_id}", truth)
    tables = release_tables(
        judged,
        verdicts,
        repairs=attempts,
        trajectories=trajectories,
        eval_results=eval_results,
        capability_profile=capability_profile if profile else None,
    )
    manifest = publish_release(tables, data_root=data_root, run_id=run_id, parent=parent, config={"n": n, "seed": seed})

    truth.release_id = manifest.release_id
    truth.rows = {name: table.num_rows for name, table in tables.items()}
    truth.families = set(tables["tasks"].column("family").to_pylist())
    truth.valid_by_family = {family: (c[0], c[1]) for family, c in by_family.items()}
    truth.validated = sum(c[0] for c in truth.valid_by_family.values())
    truth.valid = sum(c[1] for c in truth.valid_by_family.values())
    sft = tables["sft"]
    for family, tokens in zip(sft.column("family").to_pylist(), sft.column("n_tokens").to_pylist(), strict=True):
        truth.sft_tokens += tokens
        truth.sft_tokens_by_family[family] = truth.sft_tokens_by_family.get(family, 0) + tokens
    return truth


def rows(con: Any, sql: str) -> list[dict[str, Any]]:
    """Run SQL on a catalog connection and return its rows as dicts."""
    from coworkenv.data.catalog import run_query

    return run_query(con, sql).to_pylist()
