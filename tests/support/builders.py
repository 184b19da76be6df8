"""Shared builders for the unit tests: real TaskSpecs, episodes and hand-built Evidence (no mocks)."""

from __future__ import annotations

import copy
import json
from typing import Any

from pydantic import TypeAdapter

from coworkenv.canonical import canonical_json, content_hash
from coworkenv.episode.episode import Episode
from coworkenv.episode.evidence import Evidence
from coworkenv.spec import Check, TaskSpec
from coworkenv.workspace import TOOLS
from coworkenv.workspace.audit import AuditEntry
from coworkenv.workspace.snapshot import diff_states
from tests.support import FIXTURES

T1_PATH = FIXTURES / "t1.json"

ALL_TOOLS = list(TOOLS.names())

# The minimum catalog, by service (docs/design/contracts.md, "Tools"; a contract).
CATALOG = {
    "files": ["files_list", "files_read", "files_write", "files_delete", "files_move"],
    "mail": [
        "mail_search",
        "mail_read",
        "mail_send",
        "mail_reply",
        "mail_draft",
        "mail_send_draft",
        "mail_move",
        "mail_label",
        "mail_mark_read",
        "mail_delete",
    ],
    "calendar": ["calendar_list", "calendar_create", "calendar_update", "calendar_delete"],
    "contacts": ["contacts_search", "contacts_get", "contacts_update"],
    "sheets": ["sheets_list", "sheets_read", "sheets_update", "sheets_append"],
    "docs": ["docs_search", "docs_read", "docs_create", "docs_update"],
    "tickets": ["tickets_search", "tickets_get", "tickets_update", "tickets_tag", "tickets_create"],
    "chat": ["chat_read", "chat_post"],
    "records": ["records_list", "records_get", "records_search", "records_create", "records_update", "records_delete"],
    "web": ["web_search", "web_fetch"],
}

_CHECK = TypeAdapter(Check)


def t1_dict() -> dict[str, Any]:
    return json.loads(T1_PATH.read_text(encoding="utf-8"))


def t1() -> TaskSpec:
    return TaskSpec.model_validate(t1_dict())


def rich_workspace() -> dict[str, Any]:
    """A workspace with records in every service, enough to exercise every tool's success and error paths."""
    return {
        "now": "2026-12-01T09:00:00Z",
        "files": {
            "reports/q3.csv": "region,revenue\nnorth,120\nsouth,80\n",
            "notes/todo.txt": "buy milk\n",
            "archive/old.txt": "old\n",
        },
        "mail": {
            "messages": [
                {
                    "id": "m1",
                    "folder": "inbox",
                    "from": "billing@vendor.test",
                    "to": ["me@acme.test"],
                    "cc": [],
                    "subject": "Invoice 7",
                    "body": "Please pay invoice 7.",
                    "date": "2026-11-30T09:00:00Z",
                },
                {
                    "id": "m2",
                    "folder": "inbox",
                    "from": "ana@acme.test",
                    "to": ["me@acme.test"],
                    "cc": ["bo@acme.test"],
                    "subject": "Lunch",
                    "body": "Lunch on Friday?",
                    "date": "2026-11-29T12:00:00Z",
                },
                {
                    "id": "m3",
                    "folder": "inbox",
                    "from": "System Notifier",
                    "to": ["me@acme.test"],
                    "cc": [],
                    "subject": "Build failed",
                    "body": "no reply address",
                    "date": "2026-11-28T12:00:00Z",
                },
            ]
        },
        "calendar": {
            "events": [
                {
                    "id": "e1",
                    "title": "Standup",
                    "start": "2026-12-01T09:00:00Z",
                    "end": "2026-12-01T09:15:00Z",
                    "attendees": ["ana@acme.test"],
                    "location": "",
                },
                {
                    "id": "e2",
                    "title": "Retro",
                    "start": "2026-12-02T15:00:00Z",
                    "end": "2026-12-02T16:00:00Z",
                    "attendees": [],
                    "location": "Room 1",
                },
            ]
        },
        "contacts": {
            "people": [
                {"id": "c1", "name": "Ana Ruiz", "email": "ana@acme.test", "team": "finance"},
                {"id": "c2", "name": "Bo Chen", "email": "bo@acme.test", "team": "engineering", "title": "Lead"},
            ]
        },
        "sheets": {
            "budget": {"columns": ["item", "amount"], "rows": [["laptops", 4000], ["desks", 1500]]},
            "empty": {"columns": ["a"], "rows": []},
        },
        "docs": {"docs": [{"id": "d1", "title": "Travel policy", "body": "Economy class for flights under 6 hours."}]},
        "tickets": {
            "tickets": [
                {
                    "id": "t1",
                    "title": "VPN down",
                    "body": "Cannot connect to VPN",
                    "status": "open",
                    "assignee": None,
                    "comments": [],
                },
                {
                    "id": "t2",
                    "title": "New laptop",
                    "body": "Request for a laptop",
                    "status": "pending",
                    "assignee": "bo@acme.test",
                    "comments": [{"author": "bo@acme.test", "text": "ordered", "ts": "2026-11-30T10:00:00Z"}],
                },
            ]
        },
        "chat": {
            "channels": {
                "general": [{"from": "ana", "text": "Hello all", "ts": "2026-12-01T08:00:00Z"}],
                "random": [],
            }
        },
        "records": {
            "collections": {
                "crm.customers": {
                    "fields": {
                        "name": {"type": "string", "required": True},
                        "tier": {"type": "string", "enum": ["gold", "silver", "bronze"]},
                        "credit": {"type": "number"},
                        "seats": {"type": "integer"},
                        "active": {"type": "boolean"},
                        "renewal": {"type": "date"},
                        "tags": {"type": "list"},
                    },
                    "records": [
                        {
                            "id": "cus-1",
                            "name": "Northwind",
                            "tier": "gold",
                            "credit": 1200.5,
                            "seats": 40,
                            "active": True,
                            "renewal": "2027-01-15",
                            "tags": ["vip", "emea"],
                        },
                        {"id": "cus-2", "name": "Globex Corp", "tier": "silver", "active": False},
                    ],
                },
                "inventory.items": {
                    "fields": {
                        "sku": {"type": "string", "required": True},
                        "stock": {"type": "integer", "required": True},
                    },
                    "records": [{"id": "itm-1", "sku": "LAP-14", "stock": 3}],
                },
            }
        },
        "web": {
            "pages": [
                {
                    "url": "https://vendor.test/pricing",
                    "title": "Vendor pricing",
                    "text": "The Pro plan costs 42 USD per seat.",
                },
                {
                    "url": "https://blog.test/notes",
                    "title": "Notes",
                    "text": "Vendor raised prices last year.",
                    "injected": True,
                },
            ]
        },
    }


def spec_dict(**overrides: Any) -> dict[str, Any]:
    """A valid TaskSpec dict over the rich workspace with every tool; `overrides` replace top-level fields."""
    base = {
        "id": "unit-rich-0001",
        "version": 1,
        "family": "unit_rich",
        "capabilities": ["retrieval"],
        "difficulty": 1,
        "instruction": "Archive the invoice email.",
        "workspace": rich_workspace(),
        "tools": list(ALL_TOOLS),
        "checks": [{"id": "archived", "kind": "mail_in_folder", "ids": ["m1"], "folder": "archive"}],
        "solution": [
            {"tool": "mail_search", "args": {"query": "invoice"}},
            {"tool": "mail_move", "args": {"id": "m1", "folder": "archive"}},
            {"answer": "Archived the invoice email."},
        ],
    }
    base.update(copy.deepcopy(overrides))
    return base


def make_spec(**overrides: Any) -> TaskSpec:
    return TaskSpec.model_validate(spec_dict(**overrides))


def rich_spec() -> TaskSpec:
    return make_spec()


def state_json(episode: Episode) -> str:
    return canonical_json(episode.workspace.state)


def check(**fields: Any) -> Any:
    fields.setdefault("id", f"chk-{fields['kind']}")
    return _CHECK.validate_python(fields)


def evidence(
    spec: TaskSpec,
    final_state: dict[str, Any] | None = None,
    *,
    calls: list[AuditEntry] | tuple[AuditEntry, ...] = (),
    answer: str = "",
    says: tuple[str, ...] = (),
    user_rounds: int = 0,
) -> Evidence:
    """Evidence built by hand from a spec's initial state and a final state (a deep copy by default), with the judge
    active now, as an episode finishing now would have."""
    from coworkenv.judge.endpoint import active_judge

    initial = spec.initial_state
    final = copy.deepcopy(initial) if final_state is None else final_state
    return Evidence(
        task_id=spec.id,
        calls=tuple(calls),
        answer=answer,
        says=tuple(says),
        user_rounds=user_rounds,
        initial_state=initial,
        final_state=final,
        final_hash=content_hash(canonical_json(final)),
        diff=diff_states(initial, final),
        judge=active_judge(),
    )


def ok(index: int, tool: str, args: dict[str, Any] | None = None) -> AuditEntry:
    return AuditEntry(index, tool, args if args is not None else {}, "ok")


def err(index: int, tool: str, code: int = 500, args: dict[str, Any] | None = None, fault: bool = False) -> AuditEntry:
    return AuditEntry(index, tool, args if args is not None else {}, "error", code, "boom", fault)


def assistant_call(name: str, arguments: Any, call_id: str = "c1", content: str | None = None) -> dict[str, Any]:
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments)
    return {
        "role": "assistant",
        "content": content,
        "tool_calls": [{"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}],
    }


def assistant_text(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def trajectory(task_id: str, *messages: dict[str, Any]) -> dict[str, Any]:
    return {"task_id": task_id, "messages": [{"role": "user", "content": "do it"}, *messages]}
