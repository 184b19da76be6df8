"""TaskSpec contract (docs/design/contracts.md, "TaskSpec"): strict parsing, clear errors, the documented example, JSON Schema."""

from __future__ import annotations

import copy
import json
import re

import pytest
from pydantic import ValidationError

from coworkenv.caps import CAPS
from coworkenv.errors import format_validation_error
from coworkenv.registry import Registry, UnknownName
from coworkenv.spec import CAPABILITIES, CHECK_KINDS, TaskSpec
from coworkenv.spec.io import load_tasks
from tests.support import EXAMPLES, ROOT

# The example of docs/design/contracts.md, "TaskSpec", read from the document: it must stay valid.
_DOC = (ROOT / "docs" / "design" / "contracts.md").read_text(encoding="utf-8")
CONTRACT_EXAMPLE = json.loads(re.search(r"## TaskSpec \(contract\).*?```json\n(.*?)```", _DOC, re.S).group(1))


def mutated(**changes) -> dict:
    spec = copy.deepcopy(CONTRACT_EXAMPLE)
    for dotted, value in changes.items():
        node = spec
        *parents, last = dotted.split("__")
        for key in parents:
            node = node[int(key)] if key.isdigit() else node[key]
        if value is KeyError:
            del node[last]
        elif last.isdigit():
            node[int(last)] = value
        else:
            node[last] = value
    return spec


def error_of(spec: dict) -> str:
    with pytest.raises(ValidationError) as info:
        TaskSpec.model_validate(spec)
    return format_validation_error(info.value)


def test_design_example_is_valid_and_round_trips():
    spec = TaskSpec.model_validate(CONTRACT_EXAMPLE)
    again = TaskSpec.model_validate_json(spec.to_json())
    assert again == spec
    assert spec.checks[0].kind == "mail_sent" and spec.checks[0].weight == 2.0


def test_services_are_optional():
    spec = mutated(workspace={})
    parsed = TaskSpec.model_validate(spec)
    assert parsed.initial_state["mail"] == {"messages": []}
    assert parsed.initial_state["files"] == {}


@pytest.mark.parametrize(
    ("changes", "needle"),
    [
        ({"surprise": 1}, "surprise"),
        ({"difficulty": 6}, "difficulty"),
        ({"difficulty": "2"}, "difficulty"),
        ({"capabilities": ["telepathy"]}, "unknown capability 'telepathy'"),
        ({"tools": ["mail_serch"]}, "did you mean 'mail_search'"),
        ({"checks__0__kind": "mail_snet"}, "checks.0"),
        ({"checks__0__weight": 0}, "checks.0.mail_sent.weight"),
        ({"checks__1__id": "forwarded"}, "check ids must be unique"),
        ({"solution__3": {"say": "bye"}}, "must end with exactly one `answer` step"),
        ({"solution__0": {"jump": 1}}, "solution.0"),
        ({"faults__rate": 1.5}, "faults.rate"),
        ({"workspace__files": {"../etc/passwd": "x"}}, "workspace.files"),
        ({"workspace__mail__messages__0__date": "yesterday"}, "date"),
        ({"workspace__mail__messages__0__colour": "red"}, "colour"),
        ({"instruction": KeyError}, "instruction: Field required"),
    ],
)
def test_invalid_specs_name_the_field(changes, needle):
    assert needle in error_of(mutated(**changes))


@pytest.mark.parametrize(
    "check",
    [
        {"id": "c", "kind": "file_contains", "path": "a.txt"},
        {"id": "c", "kind": "file_contains", "path": "a.txt", "text": "x", "regex": "x"},
        {"id": "c", "kind": "sheet_cell", "sheet": "s", "match": {}, "column": "a"},
        {"id": "c", "kind": "unchanged"},
        {"id": "c", "kind": "event_absent", "event_id": "e1", "title_contains": "Standup"},
        {"id": "c", "kind": "answer_contains"},
        {"id": "c", "kind": "record", "service": "tickets", "collection": "people", "match": {"id": "t1"}},
    ],
)
def test_check_parameters_that_exclude_each_other(check):
    error_of(mutated(checks=[check]))


def test_every_check_kind_has_an_evaluator_and_a_model():
    from coworkenv.checks import CHECKS as EVALUATORS

    assert sorted(EVALUATORS.names()) == sorted(CHECK_KINDS)
    documented = {
        "file_exists",
        "file_absent",
        "file_contains",
        "file_equals",
        "csv_cell",
        "sheet_cell",
        "mail_sent",
        "mail_in_folder",
        "event_exists",
        "event_absent",
        "record",
        "unchanged",
        "tool_called",
        "tool_not_called",
        "asked_user",
        "answer_contains",
        "answer_number",
    }
    assert documented <= set(CHECK_KINDS)


def test_capabilities_are_the_nine_of_the_design():
    assert CAPABILITIES.names() == [
        "retrieval",
        "data_analysis",
        "authoring",
        "communication",
        "scheduling",
        "multi_step",
        "multi_turn",
        "safety",
        "robustness",
    ]


def test_json_schema_describes_the_contract():
    schema = TaskSpec.model_json_schema(by_alias=True)
    assert schema["additionalProperties"] is False
    assert {"id", "family", "capabilities", "difficulty", "instruction", "tools", "checks", "solution"} <= set(
        schema["required"]
    )
    text = json.dumps(schema)
    for kind in CHECK_KINDS:
        assert f'"{kind}"' in text


def test_load_tasks_reads_json_jsonl_and_directories(tmp_path):
    (tmp_path / "a.json").write_text(json.dumps(CONTRACT_EXAMPLE))
    second = mutated(id="other-1")
    (tmp_path / "b.jsonl").write_text(json.dumps(second) + "\n\n" + json.dumps(mutated(id="other-2")) + "\n")
    assert [t.id for t in load_tasks(tmp_path)] == ["mail_triage-00042", "other-1", "other-2"]
    (tmp_path / "c.jsonl").write_text(json.dumps(CONTRACT_EXAMPLE) + "\n")
    with pytest.raises(Exception, match="appears twice"):
        load_tasks(tmp_path)


def test_load_errors_name_file_and_line(tmp_path):
    from coworkenv.errors import CoworkEnvError

    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(CONTRACT_EXAMPLE) + "\n" + json.dumps(mutated(difficulty=9)) + "\n")
    with pytest.raises(CoworkEnvError, match=r"bad.jsonl:2: difficulty"):
        load_tasks(bad)
    (tmp_path / "nojson.json").write_text("{not json")
    with pytest.raises(CoworkEnvError, match="not valid JSON"):
        load_tasks(tmp_path / "nojson.json")
    from coworkenv.spec.io import load_task

    with pytest.raises(CoworkEnvError, match=r"bad.jsonl: holds one JSON document per line; this takes a single one"):
        load_task(bad)  # `run --task` and `grade --task` take one task
    (tmp_path / "one.jsonl").write_text(json.dumps(CONTRACT_EXAMPLE) + "\n")
    assert load_task(tmp_path / "one.jsonl").id == CONTRACT_EXAMPLE["id"]


def test_registry_suggests_close_names():
    reg: Registry[int] = Registry("widget")
    reg.add("sprocket", 1)
    with pytest.raises(UnknownName, match="did you mean 'sprocket'"):
        reg.get("sprocet")
    with pytest.raises(ValueError, match="registered twice"):
        reg.add("sprocket", 2)
    assert reg.find("sprocket") == 1 and reg.find("sprocet") is None


def _refusal(data) -> dict:
    with pytest.raises(ValidationError) as info:
        TaskSpec.model_validate(data)
    return info.value.errors()[0]


def _nested(depth: int):
    value: object = "x"
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(
    ("changes", "error_type", "words"),
    [
        ({"meta__deep": _nested(CAPS.json_depth + 5)}, "too_deep", "meta.deep"),
        ({"meta__deep": _nested(100_000)}, "too_deep", f"deeper than {CAPS.json_depth}"),
        ({"workspace__files__big.txt": "x" * (CAPS.string_chars + 1)}, "too_large", "workspace.files.big.txt"),
        (
            {"workspace__files": {f"f{i}.txt": "" for i in range(CAPS.collection_items + 1)}},
            "too_large",
            "collection_items",
        ),
        ({"instruction": "x" * (CAPS.instruction_chars + 1)}, "string_too_long", "instruction"),
        ({"solution__3__answer": "x" * (CAPS.answer_chars + 1)}, "string_too_long", "answer"),
        (
            {"checks": [{"id": f"c{i}", "kind": "answer_contains", "text": "x"} for i in range(CAPS.checks + 1)]},
            "too_long",
            "checks",
        ),
        ({"prohibited": [{"tool": "mail_delete"}] * (CAPS.prohibited_rules + 1)}, "too_long", "prohibited"),
        ({"solution": [{"say": "hi"}] * CAPS.solution_steps + [{"answer": "x"}]}, "too_long", "solution"),
        ({"meta__wide": [[0] * 5_000 for _ in range(101)]}, "too_large", "json_values"),
    ],
    ids=[
        "deep",
        "very-deep",
        "huge-string",
        "many-files",
        "long-instruction",
        "long-answer",
        "many-checks",
        "many-rules",
        "many-steps",
        "many-values",
    ],
)
def test_specs_over_a_cap_are_refused_with_a_named_field_and_cap(changes, error_type, words):
    error = _refusal(mutated(**changes))
    assert error["type"] == error_type
    assert words in error["msg"] or words in ".".join(map(str, error["loc"]))


def test_the_caps_are_generous_for_real_specs():
    assert TaskSpec.model_validate(mutated(meta__deep=_nested(CAPS.json_depth - 4))).meta.model_extra["deep"]


def test_to_json_is_compact_and_parses_back_to_the_spec_also_with_a_lone_surrogate():
    """Pydantic's serializer refuses text that is not valid Unicode (a lone surrogate: validation refuses it too, but a
    spec copied with `model_copy(update=...)` is not validated): that spec takes the slow path, to the same format."""
    spec = next(iter(load_tasks(EXAMPLES)))
    text = spec.to_json()
    assert text == json.dumps(json.loads(text), ensure_ascii=False, separators=(",", ":"))
    assert TaskSpec.model_validate_json(text) == spec
    odd = spec.model_copy(update={"instruction": spec.instruction + " \ud800"})
    odd_text = odd.to_json()
    assert "\ud800" in odd_text and odd_text == json.dumps(
        json.loads(odd_text), ensure_ascii=False, separators=(",", ":")
    )
    assert json.loads(odd_text) == {**json.loads(text), "instruction": odd.instruction}
