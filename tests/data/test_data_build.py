"""Builders produce tables with exactly the release schemas, and the rows mean what the schemas say."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from coworkenv.data.build import (
    message_row,
    repairs_table,
    rl_table,
    sft_table,
    spec_from_row,
    tasks_table,
    trajectories_table,
    validations_table,
)
from coworkenv.data.schemas import TABLES, conform_table
from coworkenv.episode.runner import initial_messages
from coworkenv.errors import CoworkEnvError
from coworkenv.rollout import rollout_rows
from coworkenv.spec.task import TaskSpec
from coworkenv.validate.codes import BATTERY_CODES
from coworkenv.workspace.tools import tool_schemas
from tests.support.releases import INVALID_INDEX, N_TASKS, passing_validation


def test_every_table_has_exactly_its_schema(tables):
    assert set(tables) == set(TABLES)
    for name, table in tables.items():
        assert table.schema.equals(TABLES[name], check_metadata=True), name


def test_row_counts_follow_validity(tables, specs):
    n_valid = N_TASKS - 1
    assert tables["tasks"].num_rows == n_valid
    assert tables["rl"].num_rows == n_valid
    assert tables["trajectories"].num_rows == n_valid
    assert tables["sft"].num_rows == n_valid  # every oracle rollout passes
    assert tables["validations"].num_rows == N_TASKS * len(BATTERY_CODES)
    invalid = specs[INVALID_INDEX].id
    assert invalid not in tables["tasks"].column("task_id").to_pylist()
    rows = [r for r in tables["validations"].to_pylist() if r["task_id"] == invalid]
    assert rows and not any(r["valid"] for r in rows)


def test_tasks_rows(tables, specs):
    by_id = {s.id: s for s in specs}
    for row in tables["tasks"].to_pylist():
        spec = by_id[row["task_id"]]
        assert spec_from_row(row) == spec
        assert row["primary_capability"] == spec.capabilities[0]
        assert row["oracle_score"] == 1.0 and row["empty_score"] == 0.0
        assert (row["violation_max_score"] is None) == (not spec.prohibited)
        assert row["n_checks"] == len(spec.checks) and row["generator"] == spec.meta.generator
        assert len(row["spec_hash"]) == 64


def test_task_scores_come_from_the_verdict_and_the_builder_runs_no_episode(specs):
    """The builder is pure: the scores are the battery's; a verdict that does not record them is refused, not rerun."""
    spec = next(s for s in specs if s.prohibited)
    validation = passing_validation(spec)
    row = tasks_table([spec], [validation]).to_pylist()[0]
    assert (row["oracle_score"], row["empty_score"], row["violation_max_score"]) == (1.0, 0.0, 0.0)
    bare = validation.model_copy(
        update={"results": [r for r in validation.results if r.code not in {"oracle_scores_1", "empty_scores_0"}]}
    )
    with pytest.raises(CoworkEnvError, match="does not record the oracle"):
        tasks_table([spec], [bare])


def test_tasks_need_validations(specs):
    with pytest.raises(CoworkEnvError, match="no validation"):
        tasks_table(specs[:1], [])


def test_sft_rows_are_trl_conversations(tables, specs):
    by_id = {s.id: s for s in specs}
    for row in tables["sft"].to_pylist():
        spec = by_id[row["task_id"]]
        assert json.loads(row["tools"]) == tool_schemas(spec.tools)
        messages = row["messages"]
        assert [m["role"] for m in messages[:2]] == ["system", "user"] and messages[-1]["role"] == "assistant"
        for m in messages:
            assert isinstance(m["content"], str)
            for call in m["tool_calls"] or ():
                assert isinstance(json.loads(call["function"]["arguments"]), dict)
            assert (m["tool_call_id"] is not None) == (m["role"] == "tool")
        assert row["n_tokens"] > 0 and row["score"] == 1.0


def test_sft_keeps_only_passing(tables, specs):
    rows = tables["trajectories"].to_pylist()
    rows[0] = {**rows[0], "passed": False}
    assert sft_table(rows, specs).num_rows == len(rows) - 1


def test_rl_rows_rebuild_the_environment(tables, specs):
    by_id = {s.id: s for s in specs}
    for row in tables["rl"].to_pylist():
        spec = spec_from_row(row)
        assert spec == by_id[row["task_id"]]
        assert [message_row(m) for m in initial_messages(spec)] == row["prompt"]
        assert json.loads(row["tools"]) == tool_schemas(spec.tools)


def test_trajectories_rows(specs):
    rows = rollout_rows(specs[:3])
    table = trajectories_table(rows)
    assert table.schema.equals(TABLES["trajectories"], check_metadata=True)
    for row in table.to_pylist():
        assert row["passed"] and row["score"] == 1.0 and row["agent"] == "oracle"
        assert row["trajectory_id"] == f"{row['task_id']}/oracle/0"
        assert len(json.loads(row["messages_json"])) == row["n_messages"]


def test_message_row_normalizes():
    row = message_row(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c1", "function": {"name": "files_read", "arguments": {"path": "a"}}}],
        }
    )
    assert row == {
        "role": "assistant",
        "content": "",
        "tool_call_id": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "files_read", "arguments": '{"path": "a"}'}}
        ],
    }
    assert message_row({"role": "user", "content": [{"type": "text", "text": "hi"}]})["content"] == "hi"


def test_repairs_and_validations(tables, validations):
    row = tables["repairs"].to_pylist()[0]
    assert json.loads(row["patch"])[0]["op"] == "replace"
    assert repairs_table([]).num_rows == 0
    table = validations_table(validations[:2])
    assert table.num_rows == 2 * len(BATTERY_CODES)
    oracle = next(r for r in table.to_pylist() if r["code"] == "oracle_scores_1")
    assert json.loads(oracle["details"]) == {"score": 1.0} and oracle["severity"] == "mandatory"


def test_rl_table_empty():
    assert rl_table([]).schema.equals(TABLES["rl"], check_metadata=True)


def test_conform_casts_safely_and_explains_failures(tables):
    tasks = tables["tasks"]
    wide = tasks.set_column(
        tasks.schema.get_field_index("difficulty"), "difficulty", tasks.column("difficulty").cast(pa.int64())
    )
    wide = wide.select(list(reversed(wide.column_names)))  # column order does not matter
    assert conform_table("tasks", wide).equals(tasks)
    overflow = wide.set_column(
        wide.schema.get_field_index("difficulty"), "difficulty", pa.array([300] * wide.num_rows, pa.int64())
    )
    with pytest.raises(CoworkEnvError, match="column difficulty: cannot convert int64 to int8"):
        conform_table("tasks", overflow)
    with pytest.raises(CoworkEnvError, match="missing columns spec_json; unknown columns extra"):
        conform_table("tasks", tasks.drop_columns(["spec_json"]).append_column("extra", pa.array([1] * tasks.num_rows)))
    nulls = tasks.set_column(0, "task_id", pa.nulls(tasks.num_rows, pa.string()))
    with pytest.raises(CoworkEnvError, match="column task_id: .* null value"):
        conform_table("tasks", nulls)
    with pytest.raises(CoworkEnvError, match="unknown table"):
        conform_table("nope", tasks)


def test_with_the_real_battery(specs):
    battery = pytest.importorskip("coworkenv.validate.battery")
    chosen = [next(s for s in specs if s.prohibited), specs[0]]
    validations = [battery.validate_spec(s) for s in chosen]
    table = tasks_table(chosen, validations)
    assert table.schema.equals(TABLES["tasks"], check_metadata=True)
    for row, v in zip(table.to_pylist(), validations, strict=True):
        assert row["discrimination"] == v.discrimination
        if v.valid:
            assert row["oracle_score"] == 1.0 and row["empty_score"] == 0.0
    assert table.to_pylist()[0]["violation_max_score"] == 0.0
    assert validations_table(validations).num_rows == sum(len(v.results) for v in validations)


def test_a_repaired_task_carries_the_round_the_loop_recorded(specs):
    spec = specs[0]
    data = spec.model_dump(mode="json", by_alias=True)
    data["meta"] = {
        **data["meta"],
        "parent": "orig-1",
        "repair": {"round": 2, "strategy": "rule:no_leakage", "patch": []},
    }
    repaired = TaskSpec.model_validate(data)
    row = tasks_table([repaired], [passing_validation(repaired)]).to_pylist()[0]
    assert (row["parent_id"], row["repair_round"]) == ("orig-1", 2)
    assert tasks_table([spec], [passing_validation(spec)]).to_pylist()[0]["repair_round"] == 0
