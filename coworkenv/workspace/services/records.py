"""records: typed record collections the task declares (`crm.customers`, `inventory.items`, `todo.tasks`, …).

A task brings a CRM, an inventory or a config store without code: each collection names its fields' types and holds
records with a string `id`. The tools take the collection by name and check every value against its schema; the
agent sees the task's collections and fields in the tools' schemas (`schema_for`, docs/design/contracts.md, "Typed
record collections").
"""

from __future__ import annotations

import copy
import fnmatch
import json
import math
from typing import TYPE_CHECKING, Annotated, Any, Literal, Self

from pydantic import Field, StringConstraints, model_validator

from coworkenv.frozen import EMPTY_DICT, EMPTY_LIST
from coworkenv.timeutil import parse_instant
from coworkenv.workspace.record_types import FiniteFloat, Record, detached
from coworkenv.workspace.service import Service, register_service
from coworkenv.workspace.tool_errors import ToolError
from coworkenv.workspace.tools import MAX_SEARCH_RESULTS, Args, Short, text_matcher, tool

if TYPE_CHECKING:
    from coworkenv.workspace.runtime import Workspace

COLLECTION_NAME = r"^[a-z][a-z0-9_]{0,31}(\.[a-z][a-z0-9_]{0,31}){0,3}$"
"""Lower-case words joined by dots: `crm.customers`, `inventory.items`, `todo`."""
FIELD_NAME = r"^[a-z][a-z0-9_]{0,63}$"
FieldType = Literal["string", "number", "integer", "boolean", "date", "list", "json"]
TYPE_WORDS = {
    "string": "a string",
    "number": "a number",
    "integer": "an integer",
    "boolean": "true or false",
    "date": "an ISO 8601 date or date-time",
    "list": "a list of strings",
    "json": "any JSON value",
}


def _type_ok(kind: str, value: Any) -> bool:
    if kind == "string":
        return isinstance(value, str)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "list":
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    if kind == "json":  # a nested value (a job's run history, a customer's orders): the record is JSON already
        return True
    try:
        parse_instant(value)
    except ValueError:
        return False
    return True


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


def value_problems(
    collection: str, fields: dict[str, dict[str, Any]], values: dict[str, Any], *, whole: bool
) -> str | None:
    """What is wrong with these values under the collection's schema (None: nothing); `whole`: a complete record,
    so every required field must be there. A null clears a field that is not required."""
    for name, value in values.items():
        spec = fields.get(name)
        if spec is None:
            return f"{collection} has no field {name!r}; its fields are {', '.join(fields)}"
        if value is None:
            if spec.get("required"):
                return f"field {name!r} of {collection} is required and cannot be null"
            continue
        if not _type_ok(spec["type"], value):
            return f"field {name!r} of {collection} must be {TYPE_WORDS[spec['type']]}, got {_shown(value)}"
        enum = spec.get("enum")
        if enum is not None and any(v not in enum for v in (value if isinstance(value, list) else [value])):
            return f"field {name!r} of {collection} must be one of {_shown(enum)}, got {_shown(value)}"
    if whole:
        for name, spec in fields.items():
            if spec.get("required") and values.get(name) is None:
                return f"{collection} record lacks its required field {name!r}"
    return None


class FieldSpec(Record):
    type: FieldType
    required: bool = False
    enum: list[str | int | FiniteFloat] | None = Field(default=None, min_length=1)
    """The allowed values (for a list: of each element)."""
    description: str = ""

    @model_validator(mode="after")
    def _enum_fits(self) -> Self:
        if self.enum is not None:
            kind = "string" if self.type == "list" else self.type
            if kind in ("boolean", "date", "json"):
                raise ValueError(f"a {self.type} field takes no enum")
            if not all(_type_ok(kind, v) for v in self.enum):
                raise ValueError(f"enum values of a {self.type} field must be {TYPE_WORDS[kind]}")
        return self


FieldName = Annotated[str, StringConstraints(pattern=FIELD_NAME)]
CollectionName = Annotated[str, StringConstraints(pattern=COLLECTION_NAME)]


class Collection(Record):
    fields: dict[FieldName, FieldSpec] = Field(min_length=1)
    records: list[dict[str, Any]] = EMPTY_LIST
    """Each a JSON object with a string `id` (unique in the collection) and values that fit `fields`."""

    @model_validator(mode="after")
    def _no_id_field(self) -> Self:
        if "id" in self.fields:
            raise ValueError("fields: `id` is every record's own string id; do not declare it")
        return self


class RecordsState(Record):
    collections: dict[CollectionName, Collection] = EMPTY_DICT

    @model_validator(mode="after")
    def _records_fit(self) -> Self:
        """Every initial record fits its collection's schema (the tools hold the agent's records to it too)."""
        for name, collection in self.collections.items():
            fields = {field: spec.model_dump() for field, spec in collection.fields.items()}
            seen: set[str] = set()
            for i, record in enumerate(collection.records):
                rid = record.get("id")
                if not isinstance(rid, str) or not rid:
                    raise ValueError(f"{name} record {i}: a record needs a non-empty string `id`")
                if rid in seen:
                    raise ValueError(f"{name} record {i}: id {rid!r} is used twice")
                seen.add(rid)
                problem = value_problems(name, fields, {k: v for k, v in record.items() if k != "id"}, whole=True)
                if problem:
                    raise ValueError(f"{name} record {i} ({rid}): {problem}")
        return self


def _record_lists(section: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    return {name: c["records"] for name, c in section["collections"].items()}


def add_collection(
    d: Any, name: str, fields: dict[str, str | dict[str, Any]], records: list[dict[str, Any]] = ()
) -> str:
    """Declare a collection (`fields`: name → type, or the full field spec) with its initial records."""
    specs = {k: {"type": v} if isinstance(v, str) else dict(v) for k, v in fields.items()}
    d.state["records"]["collections"][name] = {"fields": specs, "records": []}
    for values in records:
        add_record(d, name, values)
    return name


def add_record(d: Any, collection: str, values: dict[str, Any]) -> str:
    """A record of a declared collection; its id is `values["id"]`, or a fresh one from the collection's name."""
    rid = values.get("id") or d.next_id(_prefix(collection))
    d.state["records"]["collections"][collection]["records"].append({**values, "id": rid})
    return rid


def _prefix(collection: str) -> str:
    return collection.rsplit(".", 1)[-1][:4] + "-"


SERVICE = register_service(
    Service(
        name="records",
        writes="authoring",
        state=RecordsState,
        description="Typed record collections the task declares (CRM customers, inventory items, …): their fields and records.",
        collections=_record_lists,
        collection_pattern=COLLECTION_NAME,
        draft={"add_collection": add_collection, "add_record": add_record},
    )
)


# --- the tools' schemas, made for the task's collections -----------------------------------------------------


def _describe(name: str, collection: dict[str, Any]) -> str:
    parts = ["id (string)"]
    for field, spec in collection["fields"].items():
        kind = {"list": "list of strings", "json": "any JSON value"}.get(spec["type"], spec["type"])
        extra = (
            [kind]
            + (["required"] if spec.get("required") else [])
            + (["one of " + "|".join(map(str, spec["enum"]))] if spec.get("enum") else [])
        )
        parts.append(f"{field} ({', '.join(extra)})" + (f": {spec['description']}" if spec.get("description") else ""))
    return f"- {name}: " + "; ".join(parts)


def schema_for(base: dict[str, Any], state: dict[str, Any]) -> dict[str, Any] | None:
    """The tool's schema with `collection` an enum of the workspace's collections and their fields described."""
    collections = (state.get("records") or {}).get("collections") or {}
    if not collections:
        return None
    schema = copy.deepcopy(base)
    prop = schema["function"]["parameters"]["properties"]["collection"]
    prop["enum"] = list(collections)
    prop["description"] = "The collection; this workspace's, with their fields:\n" + "\n".join(
        _describe(name, c) for name, c in collections.items()
    )
    return schema


# --- the tools ----------------------------------------------------------------------------------------------


class CollectionArgs(Args):
    collection: Short


class ListArgs(CollectionArgs):
    where: dict[str, Any] | None = None
    """field → value: strings as case-insensitive globs, a list field matches when one element does."""
    limit: int = Field(default=MAX_SEARCH_RESULTS, ge=1, le=MAX_SEARCH_RESULTS)


class SearchArgs(CollectionArgs):
    query: Short = ""


class IdArgs(CollectionArgs):
    id: Short


class CreateArgs(CollectionArgs):
    fields: dict[str, Any]
    id: Short | None = None


class UpdateArgs(IdArgs):
    fields: dict[str, Any]


def _collection(ws: Workspace, name: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    collections = ws.state["records"]["collections"]
    if name not in collections:
        known = ", ".join(collections) or "none"
        raise ToolError(404, f"collection {name!r} not found; this workspace has: {known}")
    return collections[name]["fields"], collections[name]["records"]


def _check(ws: Workspace, collection: str, fields: dict[str, Any], values: dict[str, Any], *, whole: bool) -> None:
    if "id" in values:
        raise ToolError(400, "a record's `id` is not a field: give it as the `id` argument")
    ws.check_text_size(json.dumps(values, ensure_ascii=False), "fields")
    problem = value_problems(collection, fields, values, whole=whole)
    if problem:
        raise ToolError(400, problem)


def _matches(want: Any, have: Any) -> bool:
    if isinstance(have, list):
        return any(_matches(want, h) for h in have)
    if isinstance(want, list):
        return any(_matches(w, have) for w in want)
    if isinstance(want, str) and isinstance(have, str):
        return fnmatch.fnmatchcase(have.casefold(), want.casefold())
    if isinstance(want, bool) or isinstance(have, bool) or want is None or have is None:
        return want is have
    return isinstance(want, int | float) and isinstance(have, int | float) and want == have


@tool("read", ListArgs, schema_for=schema_for)
def records_list(ws: Workspace, a: ListArgs) -> dict:
    """List a collection's records, optionally only those whose fields match `where` ({field: value}; text as globs)."""
    fields, records = _collection(ws, a.collection)
    where = a.where or {}
    for name in where:
        if name != "id" and name not in fields:
            raise ToolError(400, f"{a.collection} has no field {name!r}; its fields are {', '.join(fields)}")
    hits = [r for r in records if all(_matches(v, r.get(k)) for k, v in where.items())]
    return {"collection": a.collection, "records": [detached(r) for r in hits[: a.limit]], "total": len(hits)}


def _texts(record: dict[str, Any]) -> list[str]:
    return [v for v in record.values() if isinstance(v, str)] + [
        x for v in record.values() if isinstance(v, list) for x in v
    ]


@tool("read", SearchArgs, schema_for=schema_for)
def records_search(ws: Workspace, a: SearchArgs) -> dict:
    """Search a collection's records by words in their text fields (all words must match)."""
    _, records = _collection(ws, a.collection)
    matches = text_matcher(a.query)
    hits = [r for r in records if matches(*_texts(r))]
    return {"collection": a.collection, "records": [detached(r) for r in hits[:MAX_SEARCH_RESULTS]], "total": len(hits)}


@tool("read", IdArgs, target="id", schema_for=schema_for)
def records_get(ws: Workspace, a: IdArgs) -> dict:
    """Get one record of a collection by id."""
    _, records = _collection(ws, a.collection)
    return detached(ws.find(records, a.id, f"{a.collection} record"))


@tool("write", CreateArgs, schema_for=schema_for)
def records_create(ws: Workspace, a: CreateArgs) -> dict:
    """Add a record to a collection (`fields`: field → value; `id` optional, generated when absent)."""
    fields, records = _collection(ws, a.collection)
    values = copy.deepcopy(a.fields)  # never alias the arguments the audit log keeps
    _check(ws, a.collection, fields, values, whole=True)
    if a.id is not None and (not a.id or any(r["id"] == a.id for r in records)):
        raise ToolError(
            409 if a.id else 400, f"{a.collection} already has a record {a.id!r}" if a.id else "an id cannot be empty"
        )
    record = {
        "id": a.id or ws.new_id(records, _prefix(a.collection)),
        **{k: v for k, v in values.items() if v is not None},
    }
    records.append(record)
    return detached(record)


@tool("write", UpdateArgs, target="id", schema_for=schema_for)
def records_update(ws: Workspace, a: UpdateArgs) -> dict:
    """Change fields of a record (`fields`: field → new value; null clears a field that is not required)."""
    fields, records = _collection(ws, a.collection)
    record = ws.find(records, a.id, f"{a.collection} record")
    if not a.fields:
        raise ToolError(400, "nothing to update: `fields` is empty")
    values = copy.deepcopy(a.fields)
    _check(ws, a.collection, fields, values, whole=False)
    for name, value in values.items():
        if value is None:
            record.pop(name, None)
        else:
            record[name] = value
    return detached(record)


@tool("destructive", IdArgs, target="id", schema_for=schema_for)
def records_delete(ws: Workspace, a: IdArgs) -> dict:
    """Delete a record from a collection."""
    _, records = _collection(ws, a.collection)
    ws.remove(records, a.id, f"{a.collection} record")
    return {"collection": a.collection, "id": a.id, "deleted": True}
