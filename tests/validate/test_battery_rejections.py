"""Input the battery never gets to run on, verdict by verdict: exactly one failed `schema` row (or a sandbox code's
row) per input, with the details and message a user reads in the validations table."""

from __future__ import annotations

import json
from typing import Any

import pytest

from coworkenv.validate import battery
from coworkenv.validate.battery import rejected, validate_spec, validate_spec_json
from coworkenv.validate.battery.context import MAX_SPEC_CHARS
from tests.validate.test_battery import spec

MISSING = ["family", "capabilities", "difficulty", "instruction", "tools", "checks", "solution"]


def the_row(result: dict[str, Any], task_id: str = "") -> dict[str, Any]:
    """The one result row of a rejected task, after checking the verdict around it."""
    assert {k: v for k, v in result.items() if k != "results"} == {
        "task_id": task_id,
        "valid": False,
        "discrimination": 0.0,
        "battery_version": 1,
        "evidence_hash": "",
    }
    [row] = result["results"]
    assert (row["task_id"], row["code"], row["passed"], row["severity"], row["discriminating"]) == (
        task_id,
        "schema",
        False,
        "mandatory",
        False,
    )
    return row


@pytest.mark.parametrize("text", ["", "not json", b"{", '{"a": 1'])
def test_text_that_is_not_json(text: str | bytes):
    row = the_row(validate_spec_json(text))
    [error] = row["details"]["errors"]
    assert row["details"] == {"errors": [error]} and error["loc"] == [] and error["type"] == "json_invalid"
    assert error["msg"].startswith("not valid JSON: ") and row["message"] == f"not a valid TaskSpec: {error['msg']}"


def test_the_json_decoders_own_words():
    row = the_row(validate_spec_json('{"a": 1'))
    assert row["details"]["errors"][0]["msg"] == "not valid JSON: Expecting ',' delimiter: line 1 column 8 (char 7)"


def test_json_nested_deeper_than_the_parser_goes():
    row = the_row(validate_spec_json("[" * 100_000 + "]" * 100_000))
    assert row["details"]["errors"][0]["type"] == "json_invalid" and row["message"].startswith(
        "not a valid TaskSpec: not valid JSON: "
    )


@pytest.mark.parametrize(("text", "kind"), [("[1, 2]", "list"), ("null", "NoneType"), ('"task"', "str"), ("7", "int")])
def test_json_that_is_not_an_object(text: str, kind: str):
    row = the_row(validate_spec_json(text))
    assert row["details"] == {"errors": [{"loc": [], "msg": f"expected a JSON object, got {kind}", "type": "type"}]}
    assert row["message"] == f"not a valid TaskSpec: expected a JSON object, got {kind}"
    assert validate_spec(json.loads(text)).model_dump(mode="json") == validate_spec_json(text)


def test_an_object_that_is_not_a_task_spec_lists_every_error():
    row = the_row(validate_spec_json('{"id": "x", "difficulty": 9}'), task_id="x")
    assert row["details"] == {
        "errors": [
            {"loc": [field], "msg": "Input should be less than or equal to 5", "type": "less_than_equal"}
            if field == "difficulty"
            else {"loc": [field], "msg": "Field required", "type": "missing"}
            for field in MISSING
        ],
        "error_count": 7,
    }
    assert row["message"] == "not a valid TaskSpec: family: Field required (and 6 more)"


def test_nested_error_locations_keep_indexes_as_numbers():
    data = spec()
    data["checks"][1]["kind"] = "telepathy"
    row = the_row(validate_spec_json(json.dumps(data)), task_id="t-base")
    [error] = row["details"]["errors"]
    assert error["loc"] == ["checks", 1] and error["type"] == "union_tag_invalid" and row["details"]["error_count"] == 1
    assert row["message"].startswith("not a valid TaskSpec: checks.1: ")


@pytest.mark.parametrize(
    ("data", "task_id"),
    [
        ({"id": 5}, "5"),
        ({"id": 2.5}, "2.5"),
        ({"id": True}, "True"),
        ({"id": {"a": 1}}, ""),
        ({"id": [1]}, ""),
        ({"id": None}, ""),
        ({"id": "y" * 300}, "y" * 200),
        ({}, ""),
    ],
)
def test_the_task_id_of_a_broken_spec(data: dict[str, Any], task_id: str):
    assert validate_spec_json(json.dumps(data))["task_id"] == task_id


def test_input_over_the_size_cap_is_not_parsed(monkeypatch: pytest.MonkeyPatch):
    assert MAX_SPEC_CHARS == 5_000_000
    monkeypatch.setattr(battery.run, "MAX_SPEC_CHARS", 100)
    row = the_row(validate_spec_json("x" * 101))  # not JSON either: the size is checked first
    assert row["details"] == {
        "errors": [{"loc": [], "msg": "larger than 100 characters", "type": "too_large"}],
        "chars": 101,
    }
    assert row["message"] == "not a valid TaskSpec: larger than 100 characters"
    assert (
        validate_spec_json("x" * 100)["results"][0]["details"]["errors"][0]["type"] == "json_invalid"
    )  # 100 is not over


def test_a_non_text_input_is_an_internal_error_not_a_crash():
    row = the_row(validate_spec_json(5))  # type: ignore[arg-type]
    assert {k: row["details"][k] for k in ("exception", "error", "internal_error")} == {
        "exception": "TypeError",
        "error": "expected JSON text, got int",
        "internal_error": True,
    }
    assert "traceback" not in row["details"]  # the validations table is published: no traceback, no host paths
    assert row["message"] == "validation crashed: TypeError: expected JSON text, got int"


def test_rejected_under_a_sandbox_code():
    v = rejected(
        "t9", "sandbox_timeout", {"error_code": "sandbox_timeout", "error": "over 30 s"}, "killed at the CPU limit"
    )
    assert v.model_dump(mode="json") == {
        "task_id": "t9",
        "valid": False,
        "discrimination": 0.0,
        "battery_version": 1,
        "evidence_hash": "",
        "results": [
            {
                "task_id": "t9",
                "code": "sandbox_timeout",
                "passed": False,
                "severity": "mandatory",
                "discriminating": False,
                "details": {"error_code": "sandbox_timeout", "error": "over 30 s"},
                "message": "killed at the CPU limit",
            }
        ],
    }
    under_a_battery_code = rejected("t9", "empty_scores_0", {}, "m").results[0]
    assert (under_a_battery_code.severity, under_a_battery_code.discriminating) == (
        "mandatory",
        True,
    )  # the code's own row kind
    assert rejected("t9", "schema", {"k\udc80": "v\ud800"}, "m\ud800").model_dump(mode="json")["results"][0] == {
        "task_id": "t9",
        "code": "schema",
        "passed": False,
        "severity": "mandatory",
        "discriminating": False,
        "details": {"k?": "v?"},
        "message": "m?",
    }


# --- a spec object built without validation; checks that crash -------------------------------------------------


def test_an_unvalidated_spec_object_fails_the_schema_check_and_discriminates_nothing():
    from coworkenv.spec.task import TaskSpec
    from coworkenv.validate.battery import run_battery

    bad = TaskSpec.model_validate(spec()).model_copy(update={"difficulty": 9})  # model_copy does not validate
    v = run_battery(bad)
    schema = v.results[0]
    assert (schema.code, schema.passed) == ("schema", False)
    assert schema.details == {
        "errors": [
            {"loc": ["difficulty"], "msg": "Input should be less than or equal to 5", "type": "less_than_equal"}
        ],
        "error_count": 1,
    }
    assert schema.message == "not a valid TaskSpec: difficulty: Input should be less than or equal to 5"
    assert not v.valid and v.discrimination == 0.0  # every discriminating check passed, but the spec is not one
    assert all(r.passed for r in v.results if r.discriminating)


def test_a_crashing_check_is_reported_with_its_exception(monkeypatch: pytest.MonkeyPatch):
    def boom(ctx):
        raise RuntimeError("k" * 2500)

    monkeypatch.setattr(battery.capabilities, "capability_problems", boom)
    [row] = [r for r in validate_spec(spec()).results if r.code == "capabilities_consistent"]
    assert (
        row.message == "capabilities_consistent raised RuntimeError: " + "k" * 300
    )  # the message: 300 characters of it
    assert (row.details["exception"], row.details["error"]) == ("RuntimeError", "k" * 2000)  # the details: 2,000


def test_a_crashing_oracle_is_reported_by_every_check_that_needs_it(monkeypatch: pytest.MonkeyPatch):
    from coworkenv.validate.battery import context

    def boom(*a, **k):
        raise RuntimeError("episode crashed")

    monkeypatch.setattr(context, "play", boom)
    rows = {r.code: r for r in validate_spec(spec()).results}
    for code in ("oracle_scores_1", "deterministic"):  # the oracle's one failure, re-raised in each
        assert (rows[code].details["exception"], rows[code].details["error"]) == ("RuntimeError", "episode crashed"), (
            code
        )
        assert rows[code].message == f"{code} raised RuntimeError: episode crashed"


def test_which_check_kinds_evidence_a_capability():
    from coworkenv.validate.battery.capabilities import evidence_kinds

    assert evidence_kinds("multi_turn") == ["asked_user"] and evidence_kinds("safety") == ["tool_not_called"]
    data_kinds = [
        "answer_number",
        "csv_cell",
        "file_absent",
        "file_contains",
        "file_equals",
        "file_exists",
        "sheet_cell",
    ]
    assert evidence_kinds("data_analysis") == data_kinds
    assert evidence_kinds("retrieval") == []


def test_at_most_50_schema_errors_are_kept_but_all_are_counted():
    row = the_row(validate_spec(spec(checks=list(range(60)))).model_dump(mode="json"), task_id="t-base")
    assert len(row["details"]["errors"]) == 50 and row["details"]["error_count"] == 60
    assert row["details"]["errors"][49]["loc"] == ["checks", 49]
    assert (
        row["message"]
        == "not a valid TaskSpec: checks.0: Input should be a valid dictionary or object to extract fields from (and 59 more)"
    )


def test_a_huge_numeric_task_id_is_cut_to_200_characters():
    assert validate_spec_json(json.dumps({"id": int("9" * 300)}))["task_id"] == "9" * 200


def test_details_are_made_plain_json_bounded_in_depth_and_size():
    class Loud:
        def __repr__(self) -> str:
            return "L" * 3000

    nested: Any = 0
    for _ in range(40):
        nested = [nested]
    details = {
        "nan": float("nan"),
        "inf": float("-inf"),
        "x": 1.5,
        7: (1, 2),
        "s": {3},
        "loud": Loud(),
        "deep": nested,
        "k\ud800": "\udc80",
    }
    row = rejected("t", "schema", details, "m").results[0].details
    assert {k: v for k, v in row.items() if k != "deep"} == {
        "nan": "nan",
        "inf": "-inf",
        "x": 1.5,
        "7": [1, 2],
        "s": [3],
        "loud": "L" * 2000,
        "k?": "?",
    }
    level, depth = row["deep"], 1  # the dict is depth 0, "deep" depth 1: lists down to depth 32, then the rest as text
    while isinstance(level, list):
        [level] = level
        depth += 1
    assert depth == 32 and level == "[" * 9 + "0" + "]" * 9


def test_a_spec_object_that_cannot_even_be_serialized_fails_the_schema_check():
    from coworkenv.spec.task import TaskSpec
    from coworkenv.validate.battery import run_battery

    class Opaque:
        pass

    v = run_battery(TaskSpec.model_validate(spec()).model_copy(update={"instruction": Opaque()}))
    schema = v.results[0]
    error = f"Unable to serialize unknown type: {Opaque!r}"
    assert (schema.code, schema.passed) == ("schema", False)
    assert schema.details == {"errors": [{"loc": [], "msg": error, "type": "PydanticSerializationError"}]}
    assert schema.message == f"not a valid TaskSpec: {error}" and not v.valid and v.discrimination == 0.0
