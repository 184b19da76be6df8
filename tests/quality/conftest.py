"""Clean release tables for every gate stage, built from real generated tasks, real episodes and real grades.

60 procedural tasks (seed 1) → consistency gate (oracle / empty / violation scores) → `tasks` and `validations`;
oracle and null episodes → `trajectories`, the passing ones → `sft`; oracle, null and oracle-plus-violation runs
→ `eval_results`. The tables are pyarrow Tables in the release schemas (so the schemas are exercised too);
building them takes well under a second. Great Expectations itself is imported once per session.
"""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa
import pytest

from coworkenv.agents import make_policy
from coworkenv.canonical import canonical_json, content_hash
from coworkenv.data import schemas
from coworkenv.episode.runner import run_episode
from coworkenv.grading.consistency import consistency_gate, violating_step
from coworkenv.grading.score import Grade, grade, grade_trajectory
from coworkenv.spec.capabilities import CAPABILITIES
from coworkenv.spec.task import TaskSpec
from coworkenv.synth.generate import GenerateRequest, generate
from coworkenv.validate.codes import BATTERY_CODES
from coworkenv.workspace.tools import tool_schemas


def task_row(spec: TaskSpec) -> dict[str, Any]:
    gate = consistency_gate(spec)
    spec_json = spec.model_dump_json(exclude_none=False)
    return {
        "task_id": spec.id,
        "version": spec.version,
        "family": spec.family,
        "capabilities": list(spec.capabilities),
        "primary_capability": spec.capabilities[0],
        "difficulty": spec.difficulty,
        "instruction": spec.instruction,
        "tools": list(spec.tools),
        "n_checks": len(spec.checks),
        "n_prohibited": len(spec.prohibited),
        "fault_rate": spec.faults.rate,
        "multi_turn": spec.user is not None,
        "generator": spec.meta.generator,
        "seed": spec.meta.seed,
        "parent_id": spec.meta.parent,
        "repair_round": 0,
        "oracle_score": gate.oracle_score,
        "empty_score": gate.empty_score,
        "violation_max_score": max(gate.violation_scores) if gate.violation_scores else None,
        "discrimination": 1.0,
        "spec_hash": content_hash(canonical_json(json.loads(spec_json))),
        "spec_json": spec_json,
    }


def validation_rows(spec: TaskSpec) -> list[dict[str, Any]]:
    return [
        {"task_id": spec.id, "code": code, "passed": True, "severity": severity, "discriminating": discriminating,
         "details": "{}", "message": description, "valid": True, "battery_version": 1}
        for code, (severity, discriminating, description) in BATTERY_CODES.items()
    ]  # fmt: skip


def sft_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for m in messages:
        calls = m.get("tool_calls")
        out.append({
            "role": m["role"],
            "content": m.get("content") if isinstance(m.get("content"), str) else None,
            "tool_calls": [{"id": c["id"], "type": "function", "function": dict(c["function"])} for c in calls] if calls else None,
            "tool_call_id": m.get("tool_call_id"),
        })  # fmt: skip
    return out


def trajectory_row(spec: TaskSpec, agent: str, messages: list[dict[str, Any]], g: Grade, n_calls: int) -> dict[str, Any]:
    return {
        "trajectory_id": f"{spec.id}/{agent}/0",
        "task_id": spec.id,
        "agent": agent,
        "model": "",
        "trial": 0,
        "family": spec.family,
        "capabilities": list(spec.capabilities),
        "difficulty": spec.difficulty,
        "messages_json": json.dumps(messages),
        "n_messages": len(messages),
        "n_tool_calls": n_calls,
        "completion": g.completion,
        "safety": g.safety,
        "robustness": g.robustness,
        "score": g.score,
        "passed": g.passed,
        "evidence_hash": g.evidence_hash,
    }


def group_of(capabilities: list[str]) -> str:
    groups = {CAPABILITIES.get(c).benchmark_group for c in capabilities}
    return "multi_turn" if "multi_turn" in groups else "multi_step" if "multi_step" in groups else "general"


def eval_row(spec: TaskSpec, model: str, g: Grade) -> dict[str, Any]:
    return {
        "eval_id": "eval-test",
        "model": model,
        "task_id": spec.id,
        "trial": 0,
        "family": spec.family,
        "capabilities": list(spec.capabilities),
        "benchmark_group": group_of(list(spec.capabilities)),
        "difficulty": spec.difficulty,
        "completion": g.completion,
        "safety": g.safety,
        "robustness": g.robustness,
        "score": g.score,
        "passed": g.passed,
        "empty": g.empty,
        "n_violations": len(g.violations),
    }


def build_tables() -> dict[str, pa.Table]:
    specs, rejections = generate(GenerateRequest(n=60, seed=1))
    assert len(specs) == 60 and not rejections
    tasks, validations, trajectories, sft, evals = [], [], [], [], []
    for spec in specs:
        tasks.append(task_row(spec))
        validations.extend(validation_rows(spec))
        for agent in ("oracle", "null"):
            trajectory, evidence = run_episode(spec, make_policy(agent, spec))
            g = grade_trajectory(spec, trajectory)
            messages = [m.model_dump(mode="json", exclude_none=True) for m in trajectory.messages]
            trajectories.append(trajectory_row(spec, agent, messages, g, len(evidence.calls)))
            evals.append(eval_row(spec, agent, g))
            if g.passed:
                sft.append({
                    "messages": sft_messages(messages),
                    "tools": json.dumps(tool_schemas(list(spec.tools))),
                    "task_id": spec.id,
                    "trajectory_id": f"{spec.id}/{agent}/0",
                    "family": spec.family,
                    "score": g.score,
                    "n_tokens": sum(len(json.dumps(m).split()) for m in messages),
                })  # fmt: skip
        if spec.prohibited:  # the oracle plus one call each rule forbids
            steps = [*spec.solution[:-1], violating_step(spec.prohibited[0]), spec.solution[-1]]
            _, evidence = run_episode(spec, make_policy("oracle", spec, steps=steps))
            evals.append(eval_row(spec, "violator", grade(spec, evidence)))
    return {
        "tasks": pa.Table.from_pylist(tasks, schema=schemas.TASKS),
        "validations": pa.Table.from_pylist(validations, schema=schemas.VALIDATIONS),
        "trajectories": pa.Table.from_pylist(trajectories, schema=schemas.TRAJECTORIES),
        "sft": pa.Table.from_pylist(sft, schema=schemas.SFT),
        "eval_results": pa.Table.from_pylist(evals, schema=schemas.EVAL_RESULTS),
    }


@pytest.fixture(scope="session")
def clean_tables() -> dict[str, pa.Table]:
    return build_tables()


@pytest.fixture(scope="session")
def clean_frames(clean_tables: dict[str, pa.Table]) -> dict[str, Any]:
    """pandas copies of the clean tables; tests corrupt copies of these (`frames_copy`)."""
    return {name: table.to_pandas() for name, table in clean_tables.items()}


@pytest.fixture(scope="session")
def gx_loaded() -> None:
    """Pay Great Expectations' import (~3 s) once per session, outside any single test's timing."""
    import great_expectations  # noqa: F401
