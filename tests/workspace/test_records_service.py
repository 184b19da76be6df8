"""The `records` service: typed collections a task declares, their tools' validation, the per-task tool schemas
(`Tool.schema_for`), diffs, rule targets and draft helpers; a records task through the gate and the battery."""

from __future__ import annotations

import copy
import json

import pytest
from jsonschema import Draft202012Validator
from pydantic import ValidationError

from coworkenv.episode.episode import Episode
from coworkenv.grading.consistency import consistency_gate
from coworkenv.spec import TaskSpec
from coworkenv.synth.draft import Draft
from coworkenv.synth.family import FAMILIES, load_families
from coworkenv.validate.battery import validate_spec
from coworkenv.workspace import SERVICES, TOOLS, tool_schemas
from coworkenv.workspace.snapshot import diff_states
from tests.support.builders import make_spec, rich_spec, spec_dict

CUSTOMERS = "crm.customers"


def step(name: str, **args):
    ep = Episode(rich_spec())
    return ep.step(name, args), ep.workspace.state


def customers(state) -> list[dict]:
    return state["records"]["collections"][CUSTOMERS]["records"]


# --- tools ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("where", "ids"),
    [
        ({"tier": "gold"}, ["cus-1"]),
        ({"name": "glob*"}, ["cus-2"]),  # a case-insensitive glob
        ({"tags": "emea"}, ["cus-1"]),  # a list field matches when one element does
        ({"active": False}, ["cus-2"]),
        ({"credit": 1200.5, "seats": 40}, ["cus-1"]),
        ({"tier": ["gold", "silver"]}, ["cus-1", "cus-2"]),  # a list of values: any of them
        ({"seats": "40"}, []),  # a number is not its text
        ({"id": "cus-2"}, ["cus-2"]),
    ],
)
def test_list_filters_by_field(where, ids):
    result, _ = step("records_list", collection=CUSTOMERS, where=where)
    assert [r["id"] for r in result["records"]] == ids and result["total"] == len(ids)


def test_list_limit_and_search_over_text_and_list_fields():
    assert step("records_list", collection=CUSTOMERS, limit=1)[0] == {
        "collection": CUSTOMERS,
        "records": [customers(rich_spec().initial_state)[0]],
        "total": 2,
    }
    assert [r["id"] for r in step("records_search", collection=CUSTOMERS, query="VIP northwind")[0]["records"]] == [
        "cus-1"
    ]
    assert step("records_search", collection=CUSTOMERS, query="nowhere")[0]["total"] == 0


def test_create_generates_fresh_ids_and_keeps_given_ones():
    ep = Episode(rich_spec())
    first = ep.step(
        "records_create",
        {"collection": CUSTOMERS, "fields": {"name": "Acme", "tags": ["new"], "renewal": "2027-02-01T00:00:00Z"}},
    )
    assert first == {"id": "cust-3", "name": "Acme", "tags": ["new"], "renewal": "2027-02-01T00:00:00Z"}
    assert ep.step("records_delete", {"collection": CUSTOMERS, "id": "cust-3"})["deleted"] is True
    # a deleted id is never reused: checks and diffs go by id
    assert ep.step("records_create", {"collection": CUSTOMERS, "fields": {"name": "Acme"}})["id"] == "cust-4"
    assert (
        ep.step("records_create", {"collection": CUSTOMERS, "fields": {"name": "Initech"}, "id": "C-100"})["id"]
        == "C-100"
    )
    assert customers(ep.workspace.state)[-1] == {"id": "C-100", "name": "Initech"}


def test_created_records_do_not_alias_the_audit_log():
    ep = Episode(rich_spec())
    args = {"collection": CUSTOMERS, "fields": {"name": "Acme", "tags": ["a"]}}
    ep.step("records_create", args)
    customers(ep.workspace.state)[-1]["tags"].append("b")
    assert ep.workspace.audit[-1].args["fields"]["tags"] == ["a"]


def test_update_sets_and_clears_fields():
    result, state = step(
        "records_update", collection=CUSTOMERS, id="cus-1", fields={"tier": "bronze", "tags": None, "seats": 41}
    )
    assert result == customers(state)[0]
    assert result["tier"] == "bronze" and result["seats"] == 41 and "tags" not in result


@pytest.mark.parametrize(
    ("name", "args", "code", "message"),
    [
        (
            "records_list",
            {"collection": "crm.leads"},
            404,
            "collection 'crm.leads' not found; this workspace has: crm.customers, inventory.items",
        ),
        (
            "records_list",
            {"collection": CUSTOMERS, "where": {"colour": "red"}},
            400,
            "crm.customers has no field 'colour'",
        ),
        (
            "records_get",
            {"collection": "inventory.items", "id": "cus-1"},
            404,
            "inventory.items record 'cus-1' not found",
        ),
        (
            "records_create",
            {"collection": CUSTOMERS, "fields": {"tier": "gold"}},
            400,
            "lacks its required field 'name'",
        ),
        (
            "records_create",
            {"collection": CUSTOMERS, "fields": {"name": "X", "tier": "platinum"}},
            400,
            "field 'tier' of crm.customers must be one of",
        ),
        (
            "records_create",
            {"collection": CUSTOMERS, "fields": {"name": "X", "nick": "x"}},
            400,
            "crm.customers has no field 'nick'",
        ),
        (
            "records_create",
            {"collection": CUSTOMERS, "fields": {"name": 5}},
            400,
            "field 'name' of crm.customers must be a string, got 5",
        ),
        ("records_create", {"collection": CUSTOMERS, "fields": {"name": "X", "id": "x"}}, 400, "`id` is not a field"),
        (
            "records_create",
            {"collection": CUSTOMERS, "fields": {"name": "X"}, "id": "cus-2"},
            409,
            "already has a record 'cus-2'",
        ),
        ("records_create", {"collection": CUSTOMERS, "fields": {"name": "X"}, "id": ""}, 400, "an id cannot be empty"),
        (
            "records_update",
            {"collection": CUSTOMERS, "id": "cus-1", "fields": {"seats": 4.5}},
            400,
            "must be an integer",
        ),
        (
            "records_update",
            {"collection": CUSTOMERS, "id": "cus-1", "fields": {"seats": True}},
            400,
            "must be an integer",
        ),
        (
            "records_update",
            {"collection": CUSTOMERS, "id": "cus-1", "fields": {"credit": "12"}},
            400,
            "must be a number",
        ),
        (
            "records_update",
            {"collection": CUSTOMERS, "id": "cus-1", "fields": {"active": 1}},
            400,
            "must be true or false",
        ),
        (
            "records_update",
            {"collection": CUSTOMERS, "id": "cus-1", "fields": {"renewal": "next week"}},
            400,
            "ISO 8601",
        ),
        (
            "records_update",
            {"collection": CUSTOMERS, "id": "cus-1", "fields": {"tags": ["a", 1]}},
            400,
            "must be a list of strings",
        ),
        (
            "records_update",
            {"collection": CUSTOMERS, "id": "cus-1", "fields": {"name": None}},
            400,
            "is required and cannot be null",
        ),
        (
            "records_update",
            {"collection": CUSTOMERS, "id": "cus-9", "fields": {"tier": "gold"}},
            404,
            "crm.customers record 'cus-9' not found",
        ),
        ("records_delete", {"collection": "crm.leads", "id": "cus-1"}, 404, "collection 'crm.leads' not found"),
    ],
)
def test_errors_are_clear_and_change_nothing(name, args, code, message):
    ep = Episode(rich_spec())
    before = copy.deepcopy(ep.workspace.state)
    result = ep.step(name, args)
    assert result["error"]["code"] == code and message in result["error"]["message"], result
    assert ep.workspace.state == before
    assert ep.workspace.audit[-1].status == "error" and ep.workspace.audit[-1].tool == name


def test_records_tools_are_named_kinded_and_targeted():
    kinds = {n: TOOLS.get(n).kind for n in TOOLS.names() if n.startswith("records_")}
    assert kinds == {
        "records_list": "read",
        "records_get": "read",
        "records_search": "read",
        "records_create": "write",
        "records_update": "write",
        "records_delete": "destructive",
    }
    assert {n for n in kinds if TOOLS.get(n).target == "id"} == {"records_get", "records_update", "records_delete"}


# --- the state: initial records fit their schema -------------------------------------------------------------


def _with_collections(collections: dict) -> dict:
    return spec_dict(workspace={**spec_dict()["workspace"], "records": {"collections": collections}})


ITEMS = {"fields": {"sku": {"type": "string", "required": True}, "stock": {"type": "integer"}}}


@pytest.mark.parametrize(
    ("collections", "message"),
    [
        (
            {"inventory.items": {**ITEMS, "records": [{"id": "i1", "stock": 2}]}},
            "record 0 (i1): inventory.items record lacks its required field",
        ),
        (
            {"inventory.items": {**ITEMS, "records": [{"id": "i1", "sku": "A", "stock": "2"}]}},
            "field 'stock' of inventory.items must be an integer",
        ),
        (
            {"inventory.items": {**ITEMS, "records": [{"id": "i1", "sku": "A", "colour": "red"}]}},
            "inventory.items has no field 'colour'",
        ),
        ({"inventory.items": {**ITEMS, "records": [{"sku": "A"}]}}, "needs a non-empty string `id`"),
        (
            {"inventory.items": {**ITEMS, "records": [{"id": "i1", "sku": "A"}, {"id": "i1", "sku": "B"}]}},
            "id 'i1' is used twice",
        ),
        ({"Inventory Items": ITEMS}, "should match pattern"),
        ({"inventory.items": {"fields": {"id": {"type": "string"}}}}, "`id` is every record's own string id"),
        ({"inventory.items": {"fields": {"sku": {"type": "text"}}}}, "string"),
        (
            {"inventory.items": {"fields": {"due": {"type": "date", "enum": ["2027-01-01"]}}}},
            "a date field takes no enum",
        ),
        (
            {"inventory.items": {"fields": {"n": {"type": "integer", "enum": ["one"]}}}},
            "enum values of a integer field must be an integer",
        ),
        ({"inventory.items": {"fields": {}}}, "at least 1 item"),
    ],
)
def test_initial_records_must_fit_their_schema(collections, message):
    with pytest.raises(ValidationError, match=message.replace("(", r"\(").replace(")", r"\)")):
        TaskSpec.model_validate(_with_collections(collections))


# --- the tools' schemas, made for the task ----------------------------------------------------------------------


def test_schemas_name_the_tasks_collections_and_fields():
    spec = rich_spec()
    schemas = {s["function"]["name"]: s for s in spec.tool_schemas}
    for name in ("records_list", "records_get", "records_search", "records_create", "records_update", "records_delete"):
        prop = schemas[name]["function"]["parameters"]["properties"]["collection"]
        assert prop["enum"] == [CUSTOMERS, "inventory.items"]
        assert (
            "- crm.customers: id (string); active (boolean); credit (number); name (string, required);"
            in prop["description"]
        )
        assert (
            "tier (string, one of gold|silver|bronze)" in prop["description"]
            and "tags (list of strings)" in prop["description"]
        )
        assert (
            "- inventory.items: id (string); sku (string, required); stock (integer, required)" in prop["description"]
        )
        Draft202012Validator.check_schema(schemas[name]["function"]["parameters"])
    validator = Draft202012Validator(schemas["records_get"]["function"]["parameters"])
    assert not list(validator.iter_errors({"collection": CUSTOMERS, "id": "cus-1"}))
    assert list(validator.iter_errors({"collection": "crm.leads", "id": "cus-1"}))
    # the generic schema is left as it was, and every other tool's schema is the generic one
    assert "enum" not in TOOLS.get("records_get").openai_schema()["function"]["parameters"]["properties"]["collection"]
    assert {n: s for n, s in schemas.items() if not n.startswith("records_")} == {
        n: TOOLS.get(n).openai_schema() for n in schemas if not n.startswith("records_")
    }


def test_schemas_are_made_once_per_task_and_generic_without_collections():
    spec = rich_spec()
    assert spec.tool_schemas is spec.tool_schemas
    assert tool_schemas(["records_list"], spec.initial_state) == [spec.tool_schemas[spec.tools.index("records_list")]]
    bare = make_spec(workspace={k: v for k, v in spec_dict()["workspace"].items() if k != "records"})
    assert bare.tool_schemas == tool_schemas(bare.tools)


def test_an_episode_hands_the_agent_the_tasks_schemas():
    from coworkenv.episode.session import EpisodeSession

    spec = rich_spec()
    assert EpisodeSession(spec).tools == spec.tool_schemas


# --- diffs, rule targets, draft helpers -------------------------------------------------------------------------


def test_diff_is_per_collection_by_id():
    ep = Episode(rich_spec())
    ep.step("records_update", {"collection": CUSTOMERS, "id": "cus-2", "fields": {"tier": "gold"}})
    ep.step("records_delete", {"collection": "inventory.items", "id": "itm-1"})
    diff = diff_states(rich_spec().initial_state, ep.workspace.state)
    assert diff["records"] == {
        CUSTOMERS: {"added": [], "removed": [], "changed": {"cus-2": {"tier": ["silver", "gold"]}}},
        "inventory.items": {"added": [], "removed": ["itm-1"], "changed": {}},
    }


def test_rule_targets_are_the_ids_of_the_collections_a_rule_names():
    service, state = SERVICES.get("records"), rich_spec().initial_state
    assert service.target_values(state, "id") == ["cus-1", "cus-2", "itm-1"]
    assert service.target_values(state, "id", {"collection": CUSTOMERS}) == ["cus-1", "cus-2"]
    assert service.target_values(state, "id", {"collection": "inventory.*"}) == ["itm-1"]
    assert SERVICES.get("tickets").target_values(state, "id", {"collection": "x"}) == [
        "t1",
        "t2",
    ]  # no collection argument


def test_draft_helpers_declare_collections_and_records():
    load_families()
    d = Draft(FAMILIES.get("inventory_restock"), 0, 1)
    d.add_collection("todo.tasks", {"title": {"type": "string", "required": True}, "done": "boolean"}, [{"title": "a"}])
    rid = d.add_record("todo.tasks", {"title": "b", "done": True})
    assert d.records("records", "todo.tasks") == [
        {"id": "task-1", "title": "a"},
        {"id": rid, "title": "b", "done": True},
    ]
    with pytest.raises(KeyError, match="no collection 'todo.nope'"):
        d.records("records", "todo.nope")


# --- a records task, end to end -----------------------------------------------------------------------------------


def test_a_records_family_task_passes_the_gate_and_the_battery():
    load_families()
    fam = FAMILIES.get("inventory_restock")
    spec = fam.build(Draft(fam, 5, 4))
    assert spec.workspace.records.collections["inventory.items"].records
    gate = consistency_gate(spec)
    assert gate.passed and gate.violation_scores == [0.0], gate.failures
    verdict = validate_spec(spec)
    assert verdict.valid, [(r.code, r.message) for r in verdict.failures]


def test_the_battery_reports_a_check_on_a_collection_that_exists_nowhere():
    data = json.loads(make_spec().to_json())
    data["checks"].append(
        {"id": "ghost", "kind": "record", "service": "records", "collection": "crm.leads", "match": {"id": "l1"}}
    )
    verdict = validate_spec(TaskSpec.model_validate(data))
    refs = next(r for r in verdict.results if r.code == "references")
    assert not refs.passed and "crm.leads" in refs.message
