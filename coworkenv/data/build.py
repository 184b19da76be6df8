"""Domain objects → Arrow tables with exactly the release schemas (`coworkenv.data.schemas`).

Plain functions: no I/O and no episodes (rollouts are a pipeline stage of their own, in the sandbox). The pipeline's
build stage calls them and hands the tables to `publish_release`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pyarrow as pa

from coworkenv.canonical import canonical_json, content_hash
from coworkenv.data.schemas import TABLES, conform_table
from coworkenv.episode.runner import initial_messages
from coworkenv.errors import CoworkEnvError
from coworkenv.spec.capabilities import CAPABILITIES
from coworkenv.spec.task import TaskSpec
from coworkenv.spec.verdict import TaskValidation


def rows_table(name: str, rows: Iterable[Mapping[str, Any]]) -> pa.Table:
    """Rows as an Arrow table with exactly the schema of table `name` (an empty one for no rows)."""
    schema = TABLES[name]
    rows = list(rows)
    if not rows:
        return schema.empty_table()
    unknown = sorted({k for row in rows for k in row} - set(schema.names))
    if unknown:
        raise CoworkEnvError(f"table {name}: unknown column(s) {', '.join(unknown)}")
    try:
        table = pa.Table.from_pylist(rows, schema=schema)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        raise CoworkEnvError(f"table {name}: {str(exc).strip().splitlines()[0]}") from None
    return conform_table(name, table)  # checks non-nullable columns


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True, default=str)


# --------------------------------------------------------------------------------------------- messages


def message_row(message: Any) -> dict[str, Any]:
    """One OpenAI chat message as a `MESSAGE` struct: `content` a string ('' for none), tool-call `arguments` JSON strings."""
    if hasattr(message, "model_dump"):
        message = message.model_dump(mode="json", exclude_none=True)
    content = message.get("content")
    if content is None:
        content = ""
    elif isinstance(content, list):  # content parts → their text
        content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
    calls = []
    for call in message.get("tool_calls") or ():
        function = call.get("function") or {}
        arguments = function.get("arguments", "{}")
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments, ensure_ascii=False)
        calls.append(
            {
                "id": call.get("id"),
                "type": call.get("type", "function"),
                "function": {"name": function.get("name"), "arguments": arguments},
            }
        )
    return {
        "role": message["role"],
        "content": content,
        "tool_calls": calls or None,
        "tool_call_id": message.get("tool_call_id"),
    }


def messages_rows(messages: Iterable[Any]) -> list[dict[str, Any]]:
    return [message_row(m) for m in messages]


def tools_json(spec: TaskSpec) -> str:
    """The OpenAI tool schemas the task offers, as the JSON string `sft.tools` / `rl.tools` hold (TRL parses it)."""
    return json.dumps(spec.tool_schemas, ensure_ascii=False)


def approx_tokens(messages: Iterable[Mapping[str, Any]]) -> int:
    """Whitespace-split words of the contents, tool names and argument JSON."""
    n = 0
    for m in messages:
        n += len((m.get("content") or "").split())
        for call in m.get("tool_calls") or ():
            n += 1 + len(call["function"]["arguments"].split())
    return n


def spec_hash(spec: TaskSpec) -> str:
    return content_hash(canonical_json(spec.model_dump(mode="json", by_alias=True)))


def _specs_by_id(specs: Iterable[TaskSpec] | Mapping[str, TaskSpec]) -> dict[str, TaskSpec]:
    if isinstance(specs, Mapping):
        return dict(specs)
    by_id: dict[str, TaskSpec] = {}
    for spec in specs:
        if spec.id in by_id:
            raise CoworkEnvError(f"task id {spec.id!r} appears twice")
        by_id[spec.id] = spec
    return by_id


def _validations_by_id(
    validations: Iterable[TaskValidation] | Mapping[str, TaskValidation],
) -> dict[str, TaskValidation]:
    if isinstance(validations, Mapping):
        return dict(validations)
    return {v.task_id: v for v in validations}


# --------------------------------------------------------------------------------------------- tables


def _outcome(validation: TaskValidation, code: str) -> Any:
    return next((r for r in validation.results if r.code == code), None)


def _detail_number(outcome: Any, *keys: str) -> float | None:
    for key in keys:
        value = outcome.details.get(key) if outcome is not None else None
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
    return None


def _rule_scores(outcome: Any) -> list[float]:
    """The battery's `prohibited_zeroes` details: `{"rules": [{"rule": i, "score": s, ...}, ...]}`."""
    rules = outcome.details.get("rules") if outcome is not None else None
    return [float(r["score"]) for r in rules or () if isinstance(r, dict) and isinstance(r.get("score"), int | float)]


def _scores(spec: TaskSpec, validation: TaskValidation) -> tuple[float, float, float | None]:
    """(oracle, empty, highest oracle-plus-violation) scores, as the battery measured them: a passed
    `oracle_scores_1` means exactly 1.0, a failed one carries the score in its details (likewise `empty_scores_0`);
    `prohibited_zeroes` carries one score per rule."""
    oracle_check = _outcome(validation, "oracle_scores_1")
    empty_check = _outcome(validation, "empty_scores_0")
    oracle = 1.0 if oracle_check is not None and oracle_check.passed else _detail_number(oracle_check, "score")
    empty = 0.0 if empty_check is not None and empty_check.passed else _detail_number(empty_check, "score")
    if oracle is None or empty is None:
        raise CoworkEnvError(
            f"task {spec.id!r}: its validation does not record the oracle's and the empty trajectory's scores"
        )
    violation: float | None = None
    if spec.prohibited:
        check = _outcome(validation, "prohibited_zeroes")
        scores = _rule_scores(check)
        if scores:
            violation = max(scores)
        elif check is not None and check.passed:
            violation = 0.0
    return oracle, empty, violation


def _repair_round(extra: Mapping[str, Any], parent: str | None) -> int:
    """The round the repair loop recorded (`meta.repair.round`); a task with a parent but no record: round 1."""
    repair = extra.get("repair")
    if isinstance(repair, Mapping) and isinstance(repair.get("round"), int):
        return repair["round"]
    return 1 if parent else 0


def task_row(spec: TaskSpec, validation: TaskValidation) -> dict[str, Any]:
    oracle, empty, violation = _scores(spec, validation)
    extra = spec.meta.model_extra or {}
    parent = spec.meta.parent
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
        "multi_turn": spec.user is not None and bool(spec.user.facts or spec.user.reveal),
        "generator": spec.meta.generator,
        "seed": spec.meta.seed,
        "parent_id": parent,
        "repair_round": _repair_round(extra, parent),
        "oracle_score": oracle,
        "empty_score": empty,
        "violation_max_score": violation,
        "discrimination": validation.discrimination,
        "spec_hash": spec_hash(spec),
        "spec_json": spec.to_json(),
    }


def tasks_table(
    specs: Iterable[TaskSpec], validations: Iterable[TaskValidation] | Mapping[str, TaskValidation]
) -> pa.Table:
    """One row per spec, with its battery verdict's scores; every spec needs a validation."""
    by_id = _validations_by_id(validations)
    rows = []
    for spec in specs:
        if spec.id not in by_id:
            raise CoworkEnvError(f"task {spec.id!r} has no validation: run the battery before building the tasks table")
        rows.append(task_row(spec, by_id[spec.id]))
    return rows_table("tasks", rows)


def validation_rows(v: TaskValidation) -> list[dict[str, Any]]:
    """A verdict's `validations` rows: one per battery check."""
    return [
        {
            "task_id": v.task_id,
            "code": r.code,
            "passed": r.passed,
            "severity": r.severity,
            "discriminating": r.discriminating,
            "details": _json(r.details),
            "message": r.message,
            "valid": v.valid,
            "battery_version": v.battery_version,
        }
        for r in v.results
    ]


def validations_table(validations: Iterable[TaskValidation]) -> pa.Table:
    """One row per (task, battery check)."""
    return rows_table("validations", [row for v in validations for row in validation_rows(v)])


def repair_row(attempt: Mapping[str, Any]) -> dict[str, Any]:
    """A `repairs` row from a repair attempt; `patch` may be the JSON Patch itself (a list) or its JSON text."""
    row = dict(attempt)
    if not isinstance(row.get("patch"), str):
        row["patch"] = json.dumps(row.get("patch") or [], ensure_ascii=False)
    row.setdefault("codes_addressed", [])
    row.setdefault("failed_codes_after", [])
    return row


def repairs_table(attempts: Iterable[Mapping[str, Any]]) -> pa.Table:
    """One row per repair attempt (`repair_row`)."""
    return rows_table("repairs", [repair_row(a) for a in attempts])


def trajectory_row(
    spec: TaskSpec, trajectory: Any, grade: Any, *, agent: str, model: str = "", trial: int = 0
) -> dict[str, Any]:
    """A `trajectories` row from a Trajectory (or its dict) and its Grade."""
    data = trajectory.to_dict() if hasattr(trajectory, "to_dict") else dict(trajectory)
    messages = data["messages"]
    n_calls = sum(len(m.get("tool_calls") or ()) for m in messages if m.get("role") == "assistant")
    return {
        "trajectory_id": f"{spec.id}/{agent}/{trial}",
        "task_id": spec.id,
        "agent": agent,
        "model": model,
        "trial": trial,
        "family": spec.family,
        "capabilities": list(spec.capabilities),
        "difficulty": spec.difficulty,
        "messages_json": json.dumps(messages, ensure_ascii=False),
        "n_messages": len(messages),
        "n_tool_calls": n_calls,
        "completion": grade.completion,
        "safety": grade.safety,
        "robustness": grade.robustness,
        "score": grade.score,
        "passed": grade.passed,
        "evidence_hash": grade.evidence_hash,
    }


def trajectories_table_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """A `trajectories` row from a rollout row (`trajectory_row`); a `messages` list stands in for `messages_json`."""
    row = dict(row)
    if "messages" in row:
        messages = row.pop("messages")
        row.setdefault(
            "messages_json", json.dumps(messages if isinstance(messages, list) else list(messages), ensure_ascii=False)
        )
        row.setdefault("n_messages", len(messages))
    return row


def trajectories_table(rows: Iterable[Mapping[str, Any]]) -> pa.Table:
    """Trajectory rows (from `trajectory_row`); a `messages` list stands in for `messages_json`."""
    return rows_table("trajectories", [trajectories_table_row(row) for row in rows])


def sft_row(row: Mapping[str, Any], family: str, tools: str) -> dict[str, Any]:
    """An SFT conversation from a trajectory row of a task of `family` offering `tools` (`tools_json` of its spec)."""
    raw = row["messages"] if "messages" in row else json.loads(row["messages_json"])
    messages = messages_rows(raw)
    return {
        "messages": messages,
        "tools": tools,
        "task_id": row["task_id"],
        "trajectory_id": row["trajectory_id"],
        "family": family,
        "score": row["score"],
        "n_tokens": approx_tokens(messages),
    }


def sft_table(
    trajectory_rows: Iterable[Mapping[str, Any]],
    specs: Iterable[TaskSpec] | Mapping[str, TaskSpec],
    *,
    only_passed: bool = True,
) -> pa.Table:
    """SFT conversations from (passing) trajectory rows: `messages` as MESSAGE structs, `tools` as a JSON string."""
    by_id = _specs_by_id(specs)
    rows = []
    for row in trajectory_rows:
        if only_passed and not row["passed"]:
            continue
        spec = by_id.get(row["task_id"])
        if spec is None:
            raise CoworkEnvError(f"trajectory {row['trajectory_id']!r}: no spec for task {row['task_id']!r}")
        rows.append(sft_row(row, spec.family, tools_json(spec)))
    return rows_table("sft", rows)


def rl_row(spec: TaskSpec) -> dict[str, Any]:
    return {
        "prompt": messages_rows(initial_messages(spec)),
        "tools": tools_json(spec),
        "task_id": spec.id,
        "family": spec.family,
        "capabilities": list(spec.capabilities),
        "difficulty": spec.difficulty,
        "spec_json": spec.to_json(),
    }


def rl_table(specs: Iterable[TaskSpec]) -> pa.Table:
    """RL prompts: the episode's opening messages, the tools and the spec that rebuilds the environment for rewards."""
    return rows_table("rl", [rl_row(spec) for spec in specs])


def benchmark_group(capabilities: Iterable[str]) -> str:
    """The Claw-Eval report group a task counts in: `multi_turn` before `multi_step`, else `general`."""
    groups = {CAPABILITIES.get(c).benchmark_group for c in capabilities}
    return "multi_turn" if "multi_turn" in groups else "multi_step" if "multi_step" in groups else "general"


def eval_row(spec: TaskSpec, grade: Any, *, eval_id: str, model: str, trial: int = 0) -> dict[str, Any]:
    """An `eval_results` row: one graded trial of a model on a task."""
    return {
        "eval_id": eval_id,
        "model": model,
        "task_id": spec.id,
        "trial": trial,
        "family": spec.family,
        "capabilities": list(spec.capabilities),
        "benchmark_group": benchmark_group(spec.capabilities),
        "difficulty": spec.difficulty,
        "completion": grade.completion,
        "safety": grade.safety,
        "robustness": grade.robustness,
        "score": grade.score,
        "passed": grade.passed,
        "empty": grade.empty,
        "n_violations": len(grade.violations),
    }


def eval_results_table(rows: Iterable[Mapping[str, Any]]) -> pa.Table:
    """One row per (evaluation, model, task, trial); a row without `benchmark_group` gets its task's."""
    out = []
    for row in rows:
        row = dict(row)
        if "benchmark_group" not in row:
            row["benchmark_group"] = benchmark_group(row["capabilities"])
        out.append(row)
    return rows_table("eval_results", out)


def capability_profile_table(rows: Iterable[Mapping[str, Any]]) -> pa.Table:
    """One row per (model, capability, difficulty) with its trial counts; `pass_rate` is passes / attempts unless given."""
    out = []
    for row in rows:
        row = dict(row)
        if "pass_rate" not in row:
            row["pass_rate"] = row["passes"] / row["attempts"]
        out.append(row)
    return rows_table("capability_profile", out)


def spec_from_row(row: Mapping[str, Any]) -> TaskSpec:
    """The TaskSpec of a `tasks` or `rl` row (its `spec_json`), e.g. inside a reward function."""
    return TaskSpec.model_validate_json(row["spec_json"])


def release_tables(
    specs: Sequence[TaskSpec],
    validations: Iterable[TaskValidation] | Mapping[str, TaskValidation],
    *,
    repairs: Iterable[Mapping[str, Any]] = (),
    trajectories: Iterable[Mapping[str, Any]] = (),
    eval_results: pa.Table | None = None,
    capability_profile: pa.Table | None = None,
) -> dict[str, pa.Table]:
    """Every table of a release from one run: `tasks`, `rl` and `sft` hold only valid tasks; `validations` all of them.

    `trajectories` are rollout rows (`trajectory_row`, e.g. the oracle rollouts of the pipeline's rollout stage); those
    of valid tasks are kept, and the passing ones become the SFT data.
    """
    by_id = _validations_by_id(validations)
    missing = [s.id for s in specs if s.id not in by_id]
    if missing:
        raise CoworkEnvError(f"{len(missing)} task(s) without a validation, e.g. {missing[0]!r}")
    valid = [s for s in specs if by_id[s.id].valid]
    valid_ids = {s.id for s in valid}
    rows = [r for r in trajectories if r["task_id"] in valid_ids]
    return {
        "tasks": tasks_table(valid, by_id),
        "validations": validations_table(by_id[s.id] for s in specs),
        "repairs": repairs_table(repairs),
        "trajectories": trajectories_table(rows),
        "sft": sft_table(rows, valid),
        "rl": rl_table(valid),
        "eval_results": conform_table("eval_results", eval_results),
        "capability_profile": conform_table("capability_profile", capability_profile),
    }
