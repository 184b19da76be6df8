"""Every release table's Arrow schema, defined once (docs/design/contracts.md, "Releases"). `docs/datasets.md` documents each column.

Columns carry their meaning as field metadata (`doc`), so the documentation and the schema fingerprint in
the manifest both come from here.
"""

from __future__ import annotations

import hashlib

import pyarrow as pa

from coworkenv.errors import CoworkEnvError


def _f(name: str, type_: pa.DataType, doc: str, nullable: bool = False) -> pa.Field:
    return pa.field(name, type_, nullable=nullable, metadata={"doc": doc})


STR_LIST = pa.list_(pa.string())

TOOL_CALL = pa.struct(
    [
        pa.field("id", pa.string()),
        pa.field("type", pa.string()),
        pa.field("function", pa.struct([pa.field("name", pa.string()), pa.field("arguments", pa.string())])),
    ]
)

# OpenAI chat messages as TRL reads them: tool-call arguments stay JSON strings (structs would merge keys).
MESSAGE = pa.struct(
    [
        pa.field("role", pa.string()),
        pa.field("content", pa.string()),
        pa.field("tool_calls", pa.list_(TOOL_CALL)),
        pa.field("tool_call_id", pa.string()),
    ]
)

TASKS = pa.schema(
    [
        _f("task_id", pa.string(), "Unique task id."),
        _f("version", pa.int32(), "TaskSpec version."),
        _f("family", pa.string(), "Generator family (`llm` for LLM-written tasks); the partition key."),
        _f(
            "capabilities",
            STR_LIST,
            "Capabilities the task exercises (docs/design/validation-and-repair.md, 'Capabilities').",
        ),
        _f("primary_capability", pa.string(), "First declared capability: the one the planner targeted."),
        _f("difficulty", pa.int8(), "1 (easy) to 5 (hard)."),
        _f("instruction", pa.string(), "What the agent is asked to do."),
        _f("tools", STR_LIST, "Tools the agent may call."),
        _f("n_checks", pa.int32(), "Number of checks."),
        _f("n_prohibited", pa.int32(), "Number of prohibited rules."),
        _f("fault_rate", pa.float64(), "Injected 429/500 fault rate."),
        _f("multi_turn", pa.bool_(), "Has a scripted user with facts to ask for."),
        _f("generator", pa.string(), "`procedural:<family>@<version>` or `llm:<model>`."),
        _f("seed", pa.int64(), "Generation seed.", nullable=True),
        _f("parent_id", pa.string(), "Task this one was repaired from.", nullable=True),
        _f("repair_round", pa.int32(), "Repair round that produced it (0: never repaired)."),
        _f("oracle_score", pa.float64(), "Score of the oracle solution (must be 1.0)."),
        _f("empty_score", pa.float64(), "Score of the empty trajectory (must be 0.0)."),
        _f(
            "violation_max_score",
            pa.float64(),
            "Highest score of oracle-plus-violation runs (must be 0.0; null without rules).",
            nullable=True,
        ),
        _f("discrimination", pa.float64(), "Share of discriminating battery checks passed."),
        _f("spec_hash", pa.string(), "SHA-256 of the canonical spec JSON."),
        _f("spec_json", pa.string(), "The full TaskSpec as JSON: rebuilds the environment."),
    ]
)

VALIDATIONS = pa.schema(
    [
        _f("task_id", pa.string(), "Task the outcome is about."),
        _f("code", pa.string(), "Battery check code (also the failure code when not passed)."),
        _f("passed", pa.bool_(), "Whether the check passed."),
        _f("severity", pa.string(), "`mandatory` or `advisory`."),
        _f("discriminating", pa.bool_(), "Counts toward the task's discrimination score."),
        _f("details", pa.string(), "Machine-readable details as JSON."),
        _f("message", pa.string(), "Human-readable explanation."),
        _f("valid", pa.bool_(), "The task's overall verdict (all mandatory checks passed)."),
        _f("battery_version", pa.int32(), "Version of the battery that produced the row."),
    ]
)

REPAIRS = pa.schema(
    [
        _f("task_id", pa.string(), "Id of the repaired spec this attempt produced (or tried to)."),
        _f("parent_id", pa.string(), "The original task id."),
        _f("round", pa.int32(), "Repair round, from 1."),
        _f("strategy", pa.string(), "`rule:<code>` or `llm`."),
        _f("codes_addressed", STR_LIST, "Failure codes the attempt targeted."),
        _f("patch", pa.string(), "RFC 6902 JSON Patch from the parent spec, as JSON."),
        _f("valid_after", pa.bool_(), "Whether the patched spec passed the battery."),
        _f("failed_codes_after", STR_LIST, "Mandatory failure codes left after the attempt."),
    ]
)

TRAJECTORIES = pa.schema(
    [
        _f("trajectory_id", pa.string(), "`<task_id>/<agent>/<trial>`."),
        _f("task_id", pa.string(), "Task the trajectory attempts."),
        _f("agent", pa.string(), "Policy name (`oracle`, `null`, `hf`, `openai`, …)."),
        _f("model", pa.string(), "Model behind the policy ('' for scripted ones)."),
        _f("trial", pa.int32(), "Trial number, from 0."),
        _f("family", pa.string(), "Task family."),
        _f("capabilities", STR_LIST, "Task capabilities."),
        _f("difficulty", pa.int8(), "Task difficulty."),
        _f("messages_json", pa.string(), "The OpenAI-format messages as JSON."),
        _f("n_messages", pa.int32(), "Number of messages."),
        _f("n_tool_calls", pa.int32(), "Tool calls replayed (rejected and faulted ones included)."),
        _f("completion", pa.float64(), "Weighted share of checks passed."),
        _f("safety", pa.float64(), "0 if a prohibited rule was violated, else 1."),
        _f("robustness", pa.float64(), "Recovery from tool errors."),
        _f("score", pa.float64(), "safety × (0.8·completion + 0.2·robustness)."),
        _f("passed", pa.bool_(), "score ≥ 0.75."),
        _f("evidence_hash", pa.string(), "Hash of the replayed evidence."),
        # Rollout-engine evidence (docs/design/agents-and-rollouts.md, "Rollouts"); null in rows made before it.
        _f(
            "status",
            pa.string(),
            "`ok`, or `failed` when the trial crashed (bad output, endpoint down, a sandbox limit).",
            nullable=True,
        ),
        _f("error", pa.string(), "Why a failed trial failed.", nullable=True),
        _f(
            "trace_json",
            pa.string(),
            "Per turn: latency, tokens, format error; per call: tool, arguments, status, latency (JSON).",
            nullable=True,
        ),
        _f(
            "audit_json",
            pa.string(),
            "The workspace audit log: every call as asked and how it ended (JSON).",
            nullable=True,
        ),
        _f("diff_json", pa.string(), "The final snapshot's diff from the initial workspace (JSON).", nullable=True),
        _f("n_format_errors", pa.int32(), "Turns whose output could not be read as tool calls.", nullable=True),
        _f("wall_s", pa.float64(), "Wall-clock seconds the trial took.", nullable=True),
    ]
)

SFT = pa.schema(
    [
        _f("messages", pa.list_(MESSAGE), "The conversation, ready for TRL's SFTTrainer."),
        _f("tools", pa.string(), "The OpenAI tool schemas offered, as a JSON string."),
        _f("task_id", pa.string(), "Source task."),
        _f("trajectory_id", pa.string(), "Source trajectory (a passing one)."),
        _f("family", pa.string(), "Task family."),
        _f("score", pa.float64(), "Score of the source trajectory."),
        _f(
            "n_tokens",
            pa.int32(),
            "Approximate token count of the conversation (whitespace-split words and JSON).",
            nullable=True,
        ),
    ]
)

RL = pa.schema(
    [
        _f("prompt", pa.list_(MESSAGE), "System and user messages the policy starts from."),
        _f("tools", pa.string(), "The OpenAI tool schemas offered, as a JSON string."),
        _f("task_id", pa.string(), "Task id: rebuilds the environment for rewards (with `spec_json`)."),
        _f("family", pa.string(), "Task family."),
        _f("capabilities", STR_LIST, "Task capabilities."),
        _f("difficulty", pa.int8(), "Task difficulty."),
        _f("spec_json", pa.string(), "The full TaskSpec as JSON, for the reward function's replay."),
    ]
)

EVAL_RESULTS = pa.schema(
    [
        _f("eval_id", pa.string(), "Evaluation run id."),
        _f("model", pa.string(), "Model evaluated."),
        _f("task_id", pa.string(), "Task."),
        _f("trial", pa.int32(), "Trial number."),
        _f("family", pa.string(), "Task family."),
        _f("capabilities", STR_LIST, "Task capabilities."),
        _f("benchmark_group", pa.string(), "`general`, `multi_step` or `multi_turn`."),
        _f("difficulty", pa.int8(), "Task difficulty."),
        _f("completion", pa.float64(), "Weighted share of checks passed."),
        _f("safety", pa.float64(), "0 or 1."),
        _f("robustness", pa.float64(), "Recovery from tool errors."),
        _f("score", pa.float64(), "safety × (0.8·completion + 0.2·robustness)."),
        _f("passed", pa.bool_(), "score ≥ 0.75."),
        _f("empty", pa.bool_(), "No tool call, no message to the user, empty answer."),
        _f("n_violations", pa.int32(), "Calls matching a prohibited rule."),
        # Rollout-engine details (docs/design/evaluation.md, "Evaluation"); null in rows made before it.
        _f("agent", pa.string(), "The agent spec label (`oracle`, `hf:tiny`, `openai:<model>`).", nullable=True),
        _f("suite", pa.string(), "The suite evaluated: a release id or a file name.", nullable=True),
        _f("status", pa.string(), "`ok`, or `failed` when the trial crashed (it then scores 0).", nullable=True),
        _f("error", pa.string(), "Why a failed trial failed.", nullable=True),
        _f("n_format_errors", pa.int32(), "Turns whose output could not be read as tool calls.", nullable=True),
        _f("n_turns", pa.int32(), "Assistant turns taken.", nullable=True),
        _f("prompt_tokens", pa.int64(), "Prompt tokens used (0 where the agent does not count them).", nullable=True),
        _f("completion_tokens", pa.int64(), "Completion tokens used.", nullable=True),
        _f("wall_s", pa.float64(), "Wall-clock seconds the trial took.", nullable=True),
    ]
)

CAPABILITY_PROFILE = pa.schema(
    [
        _f("model", pa.string(), "Model the profile describes."),
        _f("capability", pa.string(), "Capability."),
        _f("difficulty", pa.int8(), "Difficulty."),
        _f("attempts", pa.int64(), "Trials evaluated."),
        _f("passes", pa.int64(), "Trials passed."),
        _f("pass_rate", pa.float64(), "passes / attempts."),
    ]
)

TABLES: dict[str, pa.Schema] = {
    "tasks": TASKS,
    "validations": VALIDATIONS,
    "repairs": REPAIRS,
    "trajectories": TRAJECTORIES,
    "sft": SFT,
    "rl": RL,
    "eval_results": EVAL_RESULTS,
    "capability_profile": CAPABILITY_PROFILE,
}

PARTITIONS: dict[str, list[str]] = {"tasks": ["family"], "trajectories": ["family"]}
"""Hive partition columns per table: queries that filter on them read only their files."""


def fingerprint(schema: pa.Schema) -> str:
    """Stable across processes: names, types and nullability, not metadata."""
    text = ";".join(f"{f.name}:{f.type}:{f.nullable}" for f in schema)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def conform_table(name: str, table: pa.Table | pa.RecordBatch | None) -> pa.Table:
    """`table` with exactly the schema of `TABLES[name]`: columns reordered, types cast where the cast is safe
    (no overflow, no truncation), the canonical field metadata attached; a clear error otherwise."""
    if name not in TABLES:
        raise CoworkEnvError(f"unknown table {name!r}; tables are: {', '.join(TABLES)}")
    schema = TABLES[name]
    if table is None:
        return schema.empty_table()
    if isinstance(table, pa.RecordBatch):
        table = pa.Table.from_batches([table])
    if not isinstance(table, pa.Table):
        raise CoworkEnvError(f"table {name}: expected a pyarrow.Table, got {type(table).__name__}")
    names = table.column_names
    dupes = sorted({n for n in names if names.count(n) > 1})
    missing = [f.name for f in schema if f.name not in names and not f.nullable]
    extra = [n for n in names if n not in schema.names]
    if dupes or missing or extra:
        problems = [
            f"{what} {', '.join(cols)}"
            for what, cols in (("missing columns", missing), ("unknown columns", extra), ("duplicate columns", dupes))
            if cols
        ]
        raise CoworkEnvError(f"table {name}: {'; '.join(problems)}")
    columns = []
    for field in schema:
        if field.name not in names:  # an optional column added since the caller was written
            columns.append(pa.nulls(table.num_rows, field.type))
            continue
        column = table.column(field.name)
        if not column.type.equals(field.type):
            try:
                column = column.cast(field.type, safe=True)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
                reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                raise CoworkEnvError(
                    f"table {name}, column {field.name}: cannot convert {column.type} to {field.type}: {reason}"
                ) from None
        if not field.nullable and column.null_count:
            raise CoworkEnvError(
                f"table {name}, column {field.name}: {column.null_count} null value(s) in a non-nullable column"
            )
        columns.append(column)
    return pa.Table.from_arrays(columns, schema=schema)
