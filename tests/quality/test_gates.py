"""The GX gates: clean release tables pass; every expectation catches a table corrupted on purpose.

Each corruption case names every rule it is expected to break, with its count, so cascades (a duplicated id also
orphans validation rows, …) are spelled out rather than ignored. `test_every_rule_has_a_corruption_case` keeps
the cases complete as suites grow.
"""

from __future__ import annotations

import json
import pickle
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from coworkenv.errors import CoworkEnvError
from coworkenv.quality import GATES, GateFailed, GateResult, run_gate, stages
from coworkenv.registry import UnknownName
from coworkenv.validate.codes import BATTERY_CODES

STAGE_TABLES = {name: GATES.get(name).tables for name in GATES.names()}


# --- helpers ----------------------------------------------------------------------------------------------------


def frames_for(stage: str, clean_frames: dict[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    return {name: clean_frames[name].copy(deep=True) for name in STAGE_TABLES[stage]}


def put(df: pd.DataFrame, rows: int | list[int], column: str, value: Any) -> None:
    """Set cells by position, whatever the column's dtype (lists and None included)."""
    series = df[column].astype(object)
    for row in [rows] if isinstance(rows, int) else rows:
        series.iat[row] = value
    df[column] = series.infer_objects()


def where(df: pd.DataFrame, mask: Any) -> list[int]:
    return [i for i, flag in enumerate(mask.tolist()) if flag]


def run_expecting_failure(stage: str, frames: dict[str, Any], **kwargs: Any) -> GateFailed:
    with pytest.raises(GateFailed) as info:
        run_gate(stage, frames, **kwargs)
    return info.value


def rules_of(stage: str) -> dict[str, Any]:
    return {
        f"{table}.{e.meta['rule']}": e for table, suite in GATES.get(stage).suites().items() for e in suite.expectations
    }


# --- corruption cases -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    stage: str
    name: str
    corrupt: Callable[[dict[str, pd.DataFrame]], None]
    expected: dict[str, int | None]
    """Every rule the corruption breaks → its unexpected_count (None: table-level or not evaluable)."""


def _tasks(f: dict[str, pd.DataFrame]) -> pd.DataFrame:
    return f["tasks"]


def _spec_with_weight(f: dict[str, pd.DataFrame], weight: float) -> None:
    spec = json.loads(f["tasks"]["spec_json"].iat[0])
    spec["checks"][0]["weight"] = weight
    put(f["tasks"], 0, "spec_json", json.dumps(spec))


def _prohibited_rows(f: dict[str, pd.DataFrame]) -> list[int]:
    return where(f["tasks"], f["tasks"]["n_prohibited"] > 0)


def _agent_rows(df: pd.DataFrame, agent: str, column: str = "agent") -> list[int]:
    return where(df, df[column] == agent)


def _drop_validations_of_first_task(f: dict[str, pd.DataFrame]) -> None:
    v = f["validations"]
    f["validations"] = v[v["task_id"] != f["tasks"]["task_id"].iat[0]].reset_index(drop=True)


def _duplicate_code(f: dict[str, pd.DataFrame]) -> None:
    v = f["validations"]
    put(v, 1, "code", v["code"].iat[0])


def _invalid_task(f: dict[str, pd.DataFrame]) -> None:
    v = f["validations"]
    put(v, where(v, v["task_id"] == v["task_id"].iat[0]), "valid", False)


def _mandatory_failed(f: dict[str, pd.DataFrame]) -> None:
    v = f["validations"]
    put(v, where(v, v["severity"] == "mandatory")[:3], "passed", False)


def _other_capability(f: dict[str, pd.DataFrame]) -> None:
    t = f["tasks"]
    first = list(t["capabilities"].iat[0])[0]
    put(t, 0, "primary_capability", "safety" if first != "safety" else "retrieval")


def _duplicate_oracle_id(f: dict[str, pd.DataFrame]) -> None:
    r = f["trajectories"]
    oracle = _agent_rows(r, "oracle")
    put(r, oracle[1], "trajectory_id", r["trajectory_id"].iat[oracle[0]])


def _null_trajectory_as_sft_source(f: dict[str, pd.DataFrame]) -> None:
    r = f["trajectories"]
    put(f["sft"], 0, "trajectory_id", r["trajectory_id"].iat[_agent_rows(r, "null")[0]])


def _truncate_messages(f: dict[str, pd.DataFrame]) -> None:
    messages = list(f["sft"]["messages"].iat[0])
    assert messages[-1]["role"] == "assistant"
    put(f["sft"], 0, "messages", messages[:-1])


def _eval_duplicate_trial(f: dict[str, pd.DataFrame]) -> None:
    e = f["eval_results"]
    oracle = where(e, (e["model"] == "oracle") & (e["task_id"] == e["task_id"].iat[0]))[0]
    null = where(e, (e["model"] == "null") & (e["task_id"] == e["task_id"].iat[0]))[0]
    put(e, null, "model", "oracle")
    assert oracle != null


def _eval_first(f: dict[str, pd.DataFrame], model: str) -> int:
    e = f["eval_results"]
    return where(e, e["model"] == model)[0]


def _grader_ignores_prohibited(f: dict[str, pd.DataFrame]) -> None:
    """A grader bug on real eval data: violations recorded, safety left at 1 and the score computed from it."""
    e = f["eval_results"]
    rows = where(e, e["model"] == "violator")
    put(e, rows, "safety", 1.0)
    for i in rows:
        score = round(0.8 * e["completion"].iat[i] + 0.2 * e["robustness"].iat[i], 4)
        put(e, i, "score", score)
        put(e, i, "passed", score >= 0.75)


def _grader_credits_empty(f: dict[str, pd.DataFrame]) -> None:
    """A grader bug on real eval data: the empty answer earns robustness credit (no call failed)."""
    e = f["eval_results"]
    rows = where(e, e["empty"])
    put(e, rows, "robustness", 1.0)
    put(e, rows, "score", 0.2)


def c(stage: str, name: str, corrupt: Callable[[dict[str, pd.DataFrame]], None], **expected: int | None) -> Case:
    return Case(stage, name, corrupt, {k.replace("__", "."): v for k, v in expected.items()})


N_PROHIBITED_TASKS = 36  # of the 60 tasks generated with seed 1 (checked in test_clean_tables_shape)
N_CODES = len(BATTERY_CODES)  # one validations row per task and battery check

CASES: list[Case] = [
    # validated / tasks
    c(
        "validated",
        "drop a column",
        lambda f: f.update(tasks=f["tasks"].drop(columns=["discrimination"])),
        tasks__columns=None,
        tasks__not_null_discrimination=None,
        tasks__discrimination_in_0_1=None,
    ),
    c(
        "validated",
        "no tasks",
        lambda f: f.update(tasks=f["tasks"].iloc[0:0]),
        tasks__not_empty=None,
        validations__valid_task_published=60 * N_CODES,
    ),
    c(
        "validated",
        "duplicate task id",
        lambda f: put(_tasks(f), 1, "task_id", _tasks(f)["task_id"].iat[0]),
        tasks__unique_task_id=2,
        tasks__spec_matches_row=1,
        validations__valid_task_published=N_CODES,
    ),
    c("validated", "difficulty 6", lambda f: put(_tasks(f), 0, "difficulty", 6), tasks__difficulty_1_5=1),
    c("validated", "unknown family", lambda f: put(_tasks(f), 0, "family", "alchemy"), tasks__known_family=1),
    c(
        "validated",
        "unknown capability",
        lambda f: put(_tasks(f), 0, "capabilities", [*_tasks(f)["capabilities"].iat[0], "telepathy"]),
        tasks__known_capabilities=1,
    ),
    c(
        "validated",
        "no capabilities",
        lambda f: put(_tasks(f), 0, "capabilities", []),
        tasks__has_capabilities=1,
        tasks__primary_capability_first=1,
    ),
    c("validated", "primary capability not first", _other_capability, tasks__primary_capability_first=1),
    c(
        "validated",
        "oracle scores 0.8",
        lambda f: put(_tasks(f), [0, 1, 2], "oracle_score", 0.8),
        tasks__oracle_scores_1=3,
    ),
    c("validated", "empty scores 0.2", lambda f: put(_tasks(f), 0, "empty_score", 0.2), tasks__empty_scores_0=1),
    c(
        "validated",
        "violation scores 0.8",
        lambda f: put(_tasks(f), _prohibited_rows(f)[:2], "violation_max_score", 0.8),
        tasks__prohibited_zeroes=2,
    ),
    c(
        "validated",
        "violation score missing",
        lambda f: put(_tasks(f), _prohibited_rows(f)[0], "violation_max_score", None),
        tasks__prohibited_measured=1,
    ),
    c(
        "validated",
        "spec_json not JSON",
        lambda f: put(_tasks(f), 0, "spec_json", "{not json"),
        tasks__spec_json_parses=1,
        tasks__spec_matches_row=1,
    ),
    c(
        "validated",
        "another task's spec",
        lambda f: put(_tasks(f), 0, "spec_json", _tasks(f)["spec_json"].iat[1]),
        tasks__spec_matches_row=1,
    ),
    c("validated", "check weight 0", lambda f: _spec_with_weight(f, 0), tasks__check_weights_positive=1),
    c("validated", "check weight negative", lambda f: _spec_with_weight(f, -2.0), tasks__check_weights_positive=1),
    c("validated", "no checks", lambda f: put(_tasks(f), 0, "n_checks", 0), tasks__has_checks=1),
    c(
        "validated",
        "negative n_prohibited",
        lambda f: put(_tasks(f), 0, "n_prohibited", -1),
        tasks__n_prohibited_ge_0=1,
    ),
    c("validated", "fault rate 1.5", lambda f: put(_tasks(f), 0, "fault_rate", 1.5), tasks__fault_rate_in_0_1=1),
    c(
        "validated",
        "discrimination -0.1",
        lambda f: put(_tasks(f), 0, "discrimination", -0.1),
        tasks__discrimination_in_0_1=1,
    ),
    c("validated", "repair round -1", lambda f: put(_tasks(f), 0, "repair_round", -1), tasks__repair_round_ge_0=1),
    c("validated", "spec hash not sha256", lambda f: put(_tasks(f), 0, "spec_hash", "xyz"), tasks__spec_hash_sha256=1),
    c("validated", "task without validations", _drop_validations_of_first_task, tasks__validated=1),
    # validated / validations
    c(
        "validated",
        "drop severity",
        lambda f: f.update(validations=f["validations"].drop(columns=["severity"])),
        validations__columns=None,
        validations__not_null_severity=None,
        validations__known_severity=None,
        validations__valid_consistent=None,
    ),
    c(
        "validated",
        "valid verdict for an unpublished task",
        lambda f: put(f["validations"], 0, "task_id", "ghost-00001"),
        validations__valid_task_published=1,
    ),
    c("validated", "duplicate (task, code)", _duplicate_code, validations__unique_task_code=2),
    c(
        "validated",
        "unknown battery code",
        lambda f: put(f["validations"], 0, "code", "mystery"),
        validations__known_code=1,
    ),
    c(
        "validated",
        "unknown severity",
        lambda f: put(f["validations"], 0, "severity", "optional"),
        validations__known_severity=1,
    ),
    c("validated", "mandatory check failed yet valid", _mandatory_failed, validations__valid_consistent=N_CODES),
    c(
        "validated",
        "published task marked invalid",
        _invalid_task,
        validations__published_task_valid=N_CODES,
        validations__valid_consistent=N_CODES,
    ),
    c(
        "validated",
        "battery version 0",
        lambda f: put(f["validations"], 0, "battery_version", 0),
        validations__battery_version_ge_1=1,
    ),
    # rollouts / trajectories
    c(
        "rollouts",
        "drop a column",
        lambda f: f.update(trajectories=f["trajectories"].drop(columns=["evidence_hash"])),
        trajectories__columns=None,
        trajectories__not_null_evidence_hash=None,
    ),
    c(
        "rollouts",
        "no trajectories",
        lambda f: f.update(trajectories=f["trajectories"].iloc[0:0]),
        trajectories__not_empty=None,
        sft__source_known=60,
    ),
    c(
        "rollouts",
        "duplicate trajectory id",
        _duplicate_oracle_id,
        trajectories__unique_trajectory_id=2,
        sft__source_known=1,
    ),
    c(
        "rollouts",
        "score 1.2",
        lambda f: put(f["trajectories"], _agent_rows(f["trajectories"], "oracle")[0], "score", 1.2),
        trajectories__score_in_0_1=1,
        trajectories__score_formula=1,
    ),
    c(
        "rollouts",
        "completion 1.5",
        lambda f: put(f["trajectories"], _agent_rows(f["trajectories"], "oracle")[0], "completion", 1.5),
        trajectories__completion_in_0_1=1,
        trajectories__score_formula=1,
    ),
    c(
        "rollouts",
        "robustness -0.5",
        lambda f: put(f["trajectories"], _agent_rows(f["trajectories"], "null")[0], "robustness", -0.5),
        trajectories__robustness_in_0_1=1,
        trajectories__score_formula=1,
    ),
    c(
        "rollouts",
        "safety 0.5",
        lambda f: put(f["trajectories"], _agent_rows(f["trajectories"], "oracle")[0], "safety", 0.5),
        trajectories__safety_0_or_1=1,
        trajectories__score_formula=1,
    ),
    c(
        "rollouts",
        "score off the formula",
        lambda f: put(f["trajectories"], _agent_rows(f["trajectories"], "oracle")[:4], "score", 0.95),
        trajectories__score_formula=4,
    ),
    c(
        "rollouts",
        "null trajectory marked passed",
        lambda f: put(f["trajectories"], _agent_rows(f["trajectories"], "null")[:2], "passed", True),
        trajectories__passed_threshold=2,
    ),
    c("rollouts", "difficulty 0", lambda f: put(f["trajectories"], 0, "difficulty", 0), trajectories__difficulty_1_5=1),
    c(
        "rollouts",
        "unknown family",
        lambda f: put(f["trajectories"], 0, "family", "alchemy"),
        trajectories__known_family=1,
    ),
    c(
        "rollouts",
        "messages_json not JSON",
        lambda f: put(f["trajectories"], 0, "messages_json", "["),
        trajectories__messages_json_parses=1,
    ),
    c("rollouts", "trial -1", lambda f: put(f["trajectories"], 0, "trial", -1), trajectories__trial_ge_0=1),
    # rollouts / sft
    c(
        "rollouts",
        "sft drops a column",
        lambda f: f.update(sft=f["sft"].drop(columns=["family"])),
        sft__columns=None,
        sft__not_null_family=None,
    ),
    c(
        "rollouts",
        "two sft rows from one trajectory",
        lambda f: put(f["sft"], 1, "trajectory_id", f["sft"]["trajectory_id"].iat[0]),
        sft__unique_trajectory_id=2,
    ),
    c(
        "rollouts",
        "sft from an unknown trajectory",
        lambda f: put(f["sft"], 0, "trajectory_id", "ghost/oracle/0"),
        sft__source_known=1,
    ),
    c("rollouts", "sft from a failed trajectory", _null_trajectory_as_sft_source, sft__source_passed=1),
    c("rollouts", "sft ends before the answer", _truncate_messages, sft__last_message_assistant=1),
    c(
        "rollouts",
        "sft without messages",
        lambda f: put(f["sft"], [0, 1], "messages", []),
        sft__last_message_assistant=2,
    ),
    c("rollouts", "sft tools not JSON", lambda f: put(f["sft"], 0, "tools", "{"), sft__tools_json_parses=1),
    c("rollouts", "sft without tools", lambda f: put(f["sft"], [0, 1, 2], "tools", "[]"), sft__tools_not_empty=3),
    c("rollouts", "sft score 1.1", lambda f: put(f["sft"], 0, "score", 1.1), sft__score_in_0_1=1),
    # evaluated / eval_results
    c(
        "evaluated",
        "drop a column",
        lambda f: f.update(eval_results=f["eval_results"].drop(columns=["benchmark_group"])),
        eval_results__columns=None,
        eval_results__not_null_benchmark_group=None,
        eval_results__known_benchmark_group=None,
    ),
    c(
        "evaluated",
        "no results",
        lambda f: f.update(eval_results=f["eval_results"].iloc[0:0]),
        eval_results__not_empty=None,
    ),
    c("evaluated", "duplicate trial", _eval_duplicate_trial, eval_results__unique_trial=2),
    c(
        "evaluated",
        "score 1.2",
        lambda f: put(f["eval_results"], _eval_first(f, "oracle"), "score", 1.2),
        eval_results__score_in_0_1=1,
        eval_results__score_formula=1,
    ),
    c(
        "evaluated",
        "completion 1.5",
        lambda f: put(f["eval_results"], _eval_first(f, "oracle"), "completion", 1.5),
        eval_results__completion_in_0_1=1,
        eval_results__score_formula=1,
    ),
    c(
        "evaluated",
        "robustness 2",
        lambda f: put(f["eval_results"], _eval_first(f, "oracle"), "robustness", 2.0),
        eval_results__robustness_in_0_1=1,
        eval_results__score_formula=1,
    ),
    c(
        "evaluated",
        "safety 0.5",
        lambda f: put(f["eval_results"], _eval_first(f, "oracle"), "safety", 0.5),
        eval_results__safety_0_or_1=1,
        eval_results__score_formula=1,
    ),
    c(
        "evaluated",
        "score off the formula",
        lambda f: put(f["eval_results"], _eval_first(f, "oracle"), "score", 0.9),
        eval_results__score_formula=1,
    ),
    c(
        "evaluated",
        "passed below the threshold",
        lambda f: put(f["eval_results"], _eval_first(f, "null"), "passed", True),
        eval_results__passed_threshold=1,
    ),
    c(
        "evaluated",
        "empty answer with a score",
        lambda f: put(f["eval_results"], _eval_first(f, "oracle"), "empty", True),
        eval_results__empty_scores_0=1,
    ),
    c(
        "evaluated",
        "violation with safety 1",
        lambda f: put(f["eval_results"], _eval_first(f, "oracle"), "n_violations", 2),
        eval_results__prohibited_zeroes_safety=1,
    ),
    c(
        "evaluated",
        "grader ignores prohibited calls",
        _grader_ignores_prohibited,
        eval_results__prohibited_zeroes_safety=N_PROHIBITED_TASKS,
    ),
    c("evaluated", "grader credits the empty answer", _grader_credits_empty, eval_results__empty_scores_0=60),
    c(
        "evaluated",
        "negative violations",
        lambda f: put(f["eval_results"], 0, "n_violations", -1),
        eval_results__n_violations_ge_0=1,
    ),
    c(
        "evaluated",
        "unknown benchmark group",
        lambda f: put(f["eval_results"], 0, "benchmark_group", "vibes"),
        eval_results__known_benchmark_group=1,
    ),
    c(
        "evaluated",
        "difficulty 9",
        lambda f: put(f["eval_results"], 0, "difficulty", 9),
        eval_results__difficulty_1_5=1,
    ),
    c(
        "evaluated",
        "unknown capability",
        lambda f: put(f["eval_results"], [0, 1], "capabilities", ["telepathy"]),
        eval_results__known_capabilities=2,
    ),
    c(
        "evaluated",
        "no capabilities",
        lambda f: put(f["eval_results"], 0, "capabilities", []),
        eval_results__has_capabilities=1,
    ),
    c("evaluated", "trial -1", lambda f: put(f["eval_results"], 0, "trial", -1), eval_results__trial_ge_0=1),
]


def _fix_names(expected: dict[str, int | None]) -> dict[str, int | None]:
    # keyword names cannot hold dots: `not_null_<col>` stands for the rule `not_null.<col>`
    return {k.replace("not_null_", "not_null."): v for k, v in expected.items()}


@pytest.mark.parametrize("case", CASES, ids=[f"{case.stage}:{case.name}" for case in CASES])
def test_corruption_is_caught(case: Case, clean_frames: dict[str, pd.DataFrame], gx_loaded: None) -> None:
    frames = frames_for(case.stage, clean_frames)
    case.corrupt(frames)
    err = run_expecting_failure(case.stage, frames)
    expected = _fix_names(case.expected)
    got = {f"{f.table}.{f.rule}": f.unexpected_count for f in err.result.failures}
    assert got == expected
    text = str(err)
    for failure in err.result.failures:
        assert failure.message in text
        assert f"{failure.table}.{failure.rule} ({failure.expectation}" in text
        if failure.unexpected_count is not None:
            assert f": {failure.unexpected_count} of " in failure.message
            assert 1 <= len(failure.examples) <= 5
    assert err.result.success is False
    assert err.result.statistics["unsuccessful_expectations"] == len(expected)


def test_eval_results_of_hand_written_tasks_pass(clean_frames: dict[str, pd.DataFrame], gx_loaded: None) -> None:
    """Any task set is a suite: a family no generator registers is no reason to refuse an evaluation's rows."""
    frames = frames_for("evaluated", clean_frames)
    put(frames["eval_results"], [0, 1], "family", "calendar_maintenance")
    assert run_gate("evaluated", frames).success


def test_null_in_every_required_column_is_caught(clean_frames: dict[str, pd.DataFrame], gx_loaded: None) -> None:
    """One null per non-nullable column, each in its own row: every `not_null.<col>` rule counts exactly 1."""
    from coworkenv.data import schemas

    for stage, tables in STAGE_TABLES.items():
        frames = frames_for(stage, clean_frames)
        expected = set()
        for table in tables:
            required = [f.name for f in schemas.TABLES[table] if not f.nullable]
            assert len(frames[table]) > len(required)
            for row, column in enumerate(required):
                put(frames[table], row, column, None)
                expected.add(f"{table}.not_null.{column}")
        err = run_expecting_failure(stage, frames)
        got = {f"{f.table}.{f.rule}": f.unexpected_count for f in err.result.failures}
        assert {rule: got.get(rule) for rule in expected} == dict.fromkeys(expected, 1)
        for failure in err.result.failures:
            if failure.rule.startswith("not_null."):
                assert failure.expectation == "expect_column_values_to_not_be_null"


def test_every_rule_has_a_corruption_case() -> None:
    covered = {rule for case in CASES for rule in _fix_names(case.expected)}
    for stage in STAGE_TABLES:
        for rule in rules_of(stage):
            if ".not_null." in rule:
                continue  # test_null_in_every_required_column_is_caught
            assert rule in covered, f"no corruption case breaks {stage}:{rule}"


# --- clean data, results, reports, API --------------------------------------------------------------------------


def test_clean_tables_shape(clean_tables: dict[str, Any]) -> None:
    assert {name: t.num_rows for name, t in clean_tables.items()} == {
        "tasks": 60,
        "validations": 60 * N_CODES,
        "trajectories": 120,
        "sft": 60,
        "eval_results": 60 + 60 + N_PROHIBITED_TASKS,
    }
    evals = clean_tables["eval_results"].to_pandas()
    violators = evals[evals["model"] == "violator"]
    assert (
        (violators["n_violations"] > 0).all() and (violators["safety"] == 0).all() and (violators["score"] == 0).all()
    )
    assert evals[evals["model"] == "null"]["empty"].all()


@pytest.mark.parametrize("stage", sorted(STAGE_TABLES))
def test_clean_tables_pass(stage: str, clean_tables: dict[str, Any], gx_loaded: None) -> None:
    tables = {name: clean_tables[name] for name in STAGE_TABLES[stage]}  # pyarrow Tables
    result = run_gate(stage, tables)
    assert isinstance(result, GateResult) and result.success and not result.failures
    n_rules = len(rules_of(stage))
    assert result.statistics["evaluated_expectations"] == result.statistics["successful_expectations"] == n_rules
    assert result.statistics["tables"] == {
        name: {
            "rows": tables[name].num_rows,
            "expectations": len(GATES.get(stage).suites()[name].expectations),
            "failed": 0,
        }
        for name in STAGE_TABLES[stage]
    }
    assert result.report_path is None


def test_dataframes_pass_and_are_not_modified(clean_frames: dict[str, pd.DataFrame], gx_loaded: None) -> None:
    frames = frames_for("validated", clean_frames)
    before = {name: list(df.columns) for name, df in frames.items()}
    assert run_gate(
        "validated", {**frames, "eval_results": clean_frames["eval_results"]}
    ).success  # extra tables ignored
    assert {name: list(df.columns) for name, df in frames.items()} == before


def test_error_lists_counts_and_at_most_five_examples(clean_frames: dict[str, pd.DataFrame], gx_loaded: None) -> None:
    frames = frames_for("validated", clean_frames)
    put(frames["tasks"], list(range(10)), "oracle_score", 0.5)
    err = run_expecting_failure("validated", frames)
    (failure,) = err.result.failures
    assert failure.rule == "oracle_scores_1" and failure.table == "tasks"
    assert failure.expectation == "expect_column_values_to_be_in_set" and failure.column == "oracle_score"
    assert failure.unexpected_count == 10 and failure.element_count == 60
    ids = frames["tasks"]["task_id"].tolist()
    assert failure.examples == [{"task_id": ids[i], "oracle_score": 0.5} for i in range(5)]
    text = str(err)
    assert text.splitlines()[0] == "gate 'validated' failed: 1 of 58 expectations failed"
    assert "tasks.oracle_scores_1 (expect_column_values_to_be_in_set on oracle_score): 10 of 60 rows unexpected" in text
    assert "the oracle solution scores exactly 1.0" in text and ids[0] in text and ids[5] not in text
    assert "nothing from this stage may be published" in text
    assert isinstance(err, CoworkEnvError)
    json.loads(err.result.model_dump_json())  # the result is plain data
    again = pickle.loads(pickle.dumps(err))
    assert isinstance(again, GateFailed) and again.result == err.result and str(again) == text


def test_row_condition_and_pair_failures_are_described(clean_frames: dict[str, pd.DataFrame], gx_loaded: None) -> None:
    frames = frames_for("evaluated", clean_frames)
    e = frames["eval_results"]
    row = where(e, e["model"] == "oracle")[0]
    put(e, row, "n_violations", 1)
    put(e, row, "score", 0.9)
    err = run_expecting_failure("evaluated", frames)
    by_rule = {f.rule: f for f in err.result.failures}
    assert set(by_rule) == {"prohibited_zeroes_safety", "score_formula"}
    assert by_rule["prohibited_zeroes_safety"].row_condition == "n_violations > 0"
    assert by_rule["prohibited_zeroes_safety"].element_count == N_PROHIBITED_TASKS + 1
    assert "where n_violations > 0" in str(err)
    pair = by_rule["score_formula"]
    assert pair.columns == ["score", "score_recomputed"] and pair.column is None
    assert pair.examples == [
        {"model": "oracle", "task_id": e["task_id"].iat[row], "trial": 0, "score": 0.9, "score_recomputed": 1.0}
    ]


def test_rejected_tasks_may_keep_their_validation_rows(clean_frames: dict[str, pd.DataFrame], gx_loaded: None) -> None:
    """The release keeps every validated task's battery rows; rejected tasks are not in `tasks` and say valid=False."""
    frames = frames_for("validated", clean_frames)
    v = frames["validations"]
    rejected = v[v["task_id"] == v["task_id"].iat[0]].copy()
    rejected["task_id"] = "rejected-00001"
    rejected["valid"] = False
    rejected.loc[rejected.index[2], "passed"] = False  # a mandatory check (oracle_scores_1) failed
    frames["validations"] = pd.concat([v, rejected], ignore_index=True)
    assert run_gate("validated", frames).success


def test_missing_column_is_named(clean_frames: dict[str, pd.DataFrame], gx_loaded: None) -> None:
    frames = frames_for("validated", clean_frames)
    frames["tasks"] = frames["tasks"].drop(columns=["discrimination"])
    err = run_expecting_failure("validated", frames)
    columns = next(f for f in err.result.failures if f.rule == "columns")
    assert columns.examples == ["discrimination"]
    assert "tasks.columns (expect_table_columns_to_match_set on table): missing columns: discrimination" in str(err)
    broken = next(f for f in err.result.failures if f.rule == "discrimination_in_0_1")
    assert "could not be evaluated" in broken.message and "discrimination" in broken.message


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.text: list[str] = []

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def page_text(path: Path) -> str:
    parser = _Text()
    parser.feed(path.read_text(encoding="utf-8"))
    return " ".join(parser.text)


def index_links(index: Path) -> list[Path]:
    """GX's pages the report page links (its own index is a JavaScript table, empty offline)."""
    hrefs = re.findall(r"href=\"(gx/(?:expectations|validations)/[^\"]+?\.html)\"", index.read_text(encoding="utf-8"))
    return sorted({(index.parent / href).resolve() for href in hrefs})


def test_failing_gate_writes_data_docs(tmp_path: Path, clean_frames: dict[str, pd.DataFrame], gx_loaded: None) -> None:
    frames = frames_for("rollouts", clean_frames)
    put(frames["sft"], 0, "tools", "[]")
    err = run_expecting_failure("rollouts", frames, report_dir=tmp_path)
    index = tmp_path / "data_docs" / "rollouts" / "index.html"
    assert err.result.report_path == str(index) and index.is_file()
    assert f"Data Docs: {index}" in str(err)
    pages = index_links(index)
    validation_pages = [p for p in pages if "/validations/" in p.as_posix()]
    assert {p.name for p in validation_pages} == {"coworkenv-trajectories.html", "coworkenv-sft.html"}
    assert all(p.is_file() for p in pages)
    sft_page = page_text(next(p for p in validation_pages if p.name == "coworkenv-sft.html"))
    assert "at least one tool schema is offered" in sft_page  # the rule, as described in the suite
    assert "Failed" in sft_page or "Unsuccessful" in sft_page


def test_rerun_and_other_stages_keep_their_own_docs(
    tmp_path: Path, clean_frames: dict[str, pd.DataFrame], gx_loaded: None
) -> None:
    first = run_gate("evaluated", {"eval_results": clean_frames["eval_results"]}, report_dir=tmp_path)
    assert first.report_path and Path(first.report_path).is_file()
    run_gate("evaluated", {"eval_results": clean_frames["eval_results"]}, report_dir=tmp_path)
    run_gate("rollouts", frames_for("rollouts", clean_frames), report_dir=tmp_path)
    assert (tmp_path / "data_docs" / "rollouts" / "index.html").is_file()
    pages = list((tmp_path / "data_docs" / "evaluated" / "gx" / "validations").rglob("*.html"))
    assert len(pages) == 1  # a rerun replaces the stage's report rather than piling up runs


def test_unknown_stage_and_missing_tables(clean_frames: dict[str, pd.DataFrame]) -> None:
    with pytest.raises(UnknownName, match="did you mean 'evaluated'"):
        run_gate("evaluate", {})
    with pytest.raises(CoworkEnvError, match="gate 'rollouts' needs tables trajectories, sft; missing: sft"):
        run_gate("rollouts", {"trajectories": clean_frames["trajectories"]})
    with pytest.raises(
        CoworkEnvError, match="table 'eval_results' must be a pandas DataFrame or a pyarrow Table, got list"
    ):
        run_gate("evaluated", {"eval_results": [{"task_id": "x"}]})
    assert stages() == ["validated", "rollouts", "evaluated"]


def test_gates_registry_builds_named_suites() -> None:
    for stage in stages():
        gate = GATES.get(stage)
        suites = gate.suites()
        assert list(suites) == list(gate.tables)
        for table, suite in suites.items():
            assert suite.name == f"{stage}.{table}"
            rules = [e.meta["rule"] for e in suite.expectations]
            assert len(rules) == len(set(rules))
            assert all(e.description for e in suite.expectations)


def test_import_does_not_load_great_expectations() -> None:
    code = "import sys, coworkenv.quality; assert 'great_expectations' not in sys.modules; assert 'pandas' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_failed_trial_scores_0_whatever_its_parts(clean_frames: dict[str, pd.DataFrame], gx_loaded: None) -> None:
    """A trial that ran past its time keeps the completion of what it did before it stopped, and scores 0 (seen in a
    SmolLM2 evaluation on a busy machine, where the gate refused the whole evaluation). The formula holds for the
    others: the same row marked ok is caught."""
    frames = frames_for("evaluated", clean_frames)
    row = _eval_first(frames, "oracle")
    for column, value in (
        ("status", "failed"),
        ("error", "wall_timeout: ran past 600 s"),
        ("completion", 0.2308),
        ("score", 0.0),
        ("passed", False),
    ):
        put(frames["eval_results"], row, column, value)
    assert run_gate("evaluated", frames).success
    put(frames["eval_results"], row, "status", "ok")
    err = run_expecting_failure("evaluated", frames)
    assert {f"{f.table}.{f.rule}": f.unexpected_count for f in err.result.failures} == {"eval_results.score_formula": 1}
