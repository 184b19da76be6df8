"""Claw-Eval fixtures → a CoworkEnv workspace: gmail → `mail.messages`, calendar → `calendar.events`, contacts →
`contacts.people`, helpdesk → `tickets.tickets`, kb/notes/documents → `docs.docs`, web pages (and injection payloads)
→ `web.pages`, and every other JSON list of objects (crm, inventory, finance, todo, …) → a `records` collection named
`<service>.<file>` with a field schema inferred from its values (types only: no field is required). Fields a service's record model lacks are dropped
and reported."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any, get_args

from coworkenv.workspace.service import SERVICES

# Claw-Eval service folder → (CoworkEnv service, {their key: ours}); keys not listed keep their name.
SHAPES: dict[str, tuple[str, dict[str, str]]] = {
    "gmail": ("mail", {"message_id": "id", "is_read": "read"}),
    "calendar": ("calendar", {"event_id": "id", "start_time": "start", "end_time": "end"}),
    "contacts": ("contacts", {"contact_id": "id", "department": "team", "note": "notes"}),
    "helpdesk": ("tickets", {"ticket_id": "id", "description": "body"}),
    "kb": ("docs", {"article_id": "id", "content": "body"}),
    "notes": ("docs", {"note_id": "id", "meeting_id": "id", "content": "body", "summary": "body"}),
    "documents": ("docs", {"doc_id": "id", "document_id": "id", "content": "body"}),
}

DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def _record_fields(service: str) -> set[str]:
    """The field names (and aliases) of a service's record model: what a fixture record may keep."""
    state = SERVICES.get(service).state
    item = get_args(state.model_fields[SERVICES.get(service).collection].annotation)[0]
    return {n for n in item.model_fields} | {f.alias for f in item.model_fields.values() if f.alias}


def _shaped(
    service: str, renames: dict[str, str], rows: list[dict[str, Any]], notes: list[str], where: str
) -> list[dict[str, Any]]:
    known = _record_fields(service)
    out, dropped = [], set()
    for row in rows:
        record: dict[str, Any] = {}
        for key, value in row.items():
            name = renames.get(key, key)
            if name in known and name not in record:
                record[name] = value
            else:
                dropped.add(key)
        if service == "mail":
            record = {
                "folder": "inbox",
                **record,
                **{k: [v] for k, v in record.items() if k in ("to", "cc") and isinstance(v, str)},
            }
        out.append(record)
    if dropped:
        notes.append(f"fixture {where}: fields {sorted(dropped)} have no place in {service} records (dropped)")
    return out


def _field_type(values: list[Any]) -> str | None:
    kinds = {type(v) for v in values}
    if kinds <= {bool}:
        return "boolean"
    if kinds <= {int}:
        return "integer"
    if kinds <= {int, float} and bool not in kinds:
        return "number"
    if kinds <= {list}:
        return "list" if all(isinstance(x, str) for v in values for x in v) else "json"
    if kinds <= {list, dict}:
        return "json"
    if kinds <= {str}:
        return "date" if all(DATE.fullmatch(v) for v in values) else "string"
    return None


def id_key(stem: str, rows: list[dict[str, Any]]) -> str | None:
    """The key that identifies a fixture record: `id`, `<singular stem>_id`, or the first `*_id` key."""
    keys = list(rows[0]) if rows else []
    singular = stem[:-3] + "y" if stem.endswith("ies") else stem.rstrip("s")
    for key in ("id", f"{singular}_id"):
        if key in keys:
            return key
    return next((k for k in keys if k.endswith("_id")), None)


def _collection(stem: str, rows: list[dict[str, Any]], notes: list[str], where: str) -> dict[str, Any] | None:
    key = id_key(stem, rows)
    if key is None:
        notes.append(f"fixture {where}: no id field (`id` or `*_id`), not imported")
        return None
    records = [{"id": str(r[key]), **{k: v for k, v in r.items() if k != key}} for r in rows if key in r]
    fields: dict[str, Any] = {}
    names = list(dict.fromkeys(k for r in records for k in r if k != "id"))
    for name in names:
        values = [r[name] for r in records if r.get(name) is not None]
        kind = _field_type(values) if values else "string"
        if kind is None:
            notes.append(f"fixture {where}: field {name!r} mixes types, dropped")
            records = [{k: v for k, v in r.items() if k != name} for r in records]
            continue
        fields[name] = {"type": kind, "required": False}  # a fixture shows what is, not what a new record must hold
    if key != "id":
        notes.append(f"fixture {where}: `{key}` is the record id")
    return {"fields": fields, "records": records}


def _web(name: str, data: Any, pages: list[dict[str, Any]], notes: list[str]) -> None:
    if name.endswith("search_results.json"):
        notes.append(f"fixture web/{name}: canned search results are not imported (web_search ranks the pages itself)")
        return
    items = (
        data
        if isinstance(data, list)
        else [x for v in data.values() if isinstance(v, list) for x in v]
        if isinstance(data, dict)
        else []
    )
    injected = "injection" in name
    for item in items:
        if isinstance(item, dict) and isinstance(item.get("url"), str):
            text = item.get("content") or item.get("text") or item.get("snippet") or ""
            pages.append(
                {
                    "url": item["url"],
                    "title": str(item.get("title") or "").strip() or item["url"],  # an untitled page: its address
                    "text": str(text),
                    "injected": bool(item.get("injected", injected)),
                }
            )


def build_workspace(fixtures: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """(workspace JSON, notes on what was dropped or could not be placed)."""
    ws: dict[str, Any] = {}
    notes: list[str] = []
    pages: list[dict[str, Any]] = []
    collections: dict[str, Any] = {}
    for name, data in fixtures.items():
        folder, _, rest = name.partition("/")
        if isinstance(data, str):
            ws.setdefault("files", {})[name] = data
            continue
        if folder == "web" and "web" in SERVICES:
            _web(rest, data, pages, notes)
            continue
        rows = data if isinstance(data, list) and all(isinstance(r, dict) for r in data) else None
        if rows is None:
            notes.append(f"fixture {name}: not a list of objects, not imported")
        elif folder in SHAPES and SHAPES[folder][0] in SERVICES:
            service, renames = SHAPES[folder]
            section = ws.setdefault(service, {SERVICES.get(service).collection: []})
            section[SERVICES.get(service).collection] += _shaped(service, renames, rows, notes, name)
        elif "records" in SERVICES and rest.endswith(".json"):
            stem = rest.rsplit("/", 1)[-1].removesuffix(".json")
            made = _collection(stem, rows, notes, name)
            if made is not None:
                collections[f"{folder}.{stem}"] = made
        else:
            notes.append(f"fixture {name}: no CoworkEnv service holds it, not imported")
    if pages:
        ws["web"] = {"pages": pages}
    if collections:
        ws["records"] = {"collections": collections}
    # A mistyped `to` is left for the TaskSpec's validation to report; here it just names no one.
    inbox = [
        a
        for m in ws.get("mail", {}).get("messages", [])
        if isinstance(m.get("to"), list)
        for a in m["to"]
        if isinstance(a, str)
    ]
    if inbox:
        ws["me"] = {"name": "Me", "email": Counter(inbox).most_common(1)[0][0]}
    return ws, notes
