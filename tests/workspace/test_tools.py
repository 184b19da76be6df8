"""The tool catalog (docs/design/contracts.md, "Tools"): every tool's success path and error codes, the audit log, JSON schemas."""

from __future__ import annotations

import json
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from coworkenv.episode.episode import Episode
from coworkenv.workspace import TOOLS, tool_schemas
from coworkenv.workspace.runtime import Workspace
from tests.support.builders import ALL_TOOLS, CATALOG, make_spec, rich_spec, state_json


def strict_json(value: Any) -> str:
    """Serialize the way an API would: NaN/Infinity are not JSON."""
    return json.dumps(value, allow_nan=False, ensure_ascii=False)


def is_error(result: Any, code: int) -> bool:
    return (
        isinstance(result, dict)
        and set(result) == {"error"}
        and set(result["error"]) == {"code", "message"}
        and result["error"]["code"] == code
        and isinstance(result["error"]["message"], str)
        and result["error"]["message"] != ""
    )


# --- catalog ---------------------------------------------------------------------------------------------


def test_catalog_has_exactly_the_45_design_tools():
    expected = [name for names in CATALOG.values() for name in names]
    assert len(expected) == 45
    assert sorted(ALL_TOOLS) == sorted(expected)
    for service, names in CATALOG.items():
        for name in names:
            assert TOOLS.get(name).service == service


def test_tool_kinds():
    kinds = {name: TOOLS.get(name).kind for name in ALL_TOOLS}
    assert set(kinds.values()) <= {"read", "write", "destructive"}
    for name in ("files_delete", "mail_delete", "calendar_delete"):
        assert kinds[name] == "destructive"
    for name, kind in kinds.items():
        verb = name.split("_", 1)[1]
        if verb in ("list", "read", "search", "get"):
            assert kind == "read", name
        if verb in ("write", "send", "reply", "create", "update", "append", "post", "move"):
            assert kind == "write", name


# --- success paths: one or more per tool ------------------------------------------------------------------

SUCCESS: list[tuple[str, dict[str, Any], Any]] = [
    ("files_list", {}, lambda r, s: [f["path"] for f in r["files"]] == sorted(s["files"])),
    (
        "files_list",
        {"dir": "reports"},
        lambda r, s: r == {"dir": "reports", "files": [{"path": "reports/q3.csv", "size": 34}]},
    ),
    ("files_list", {"dir": "./reports/"}, lambda r, s: r["dir"] == "reports"),
    ("files_read", {"path": "notes/todo.txt"}, lambda r, s: r == {"path": "notes/todo.txt", "content": "buy milk\n"}),
    ("files_read", {"path": "notes//./todo.txt"}, lambda r, s: r["path"] == "notes/todo.txt"),
    (
        "files_write",
        {"path": "out/summary.md", "content": "# Hi\n"},
        lambda r, s: (
            r == {"path": "out/summary.md", "created": True, "size": 5} and s["files"]["out/summary.md"] == "# Hi\n"
        ),
    ),
    (
        "files_write",
        {"path": "notes/todo.txt", "content": "é"},
        lambda r, s: r["created"] is False and r["size"] == 2 and s["files"]["notes/todo.txt"] == "é",
    ),
    (
        "files_delete",
        {"path": "archive/old.txt"},
        lambda r, s: r == {"path": "archive/old.txt", "deleted": True} and "archive/old.txt" not in s["files"],
    ),
    (
        "files_move",
        {"src": "notes/todo.txt", "dst": "done/todo.txt"},
        lambda r, s: (
            r == {"src": "notes/todo.txt", "dst": "done/todo.txt"}
            and s["files"]["done/todo.txt"] == "buy milk\n"
            and "notes/todo.txt" not in s["files"]
        ),
    ),
    ("mail_search", {"query": "invoice"}, lambda r, s: r["total"] == 1 and r["messages"][0]["id"] == "m1"),
    ("mail_search", {}, lambda r, s: [m["id"] for m in r["messages"]] == ["m1", "m2", "m3"]),  # newest first
    ("mail_search", {"query": "", "folder": "archive"}, lambda r, s: r == {"messages": [], "total": 0}),
    ("mail_search", {"query": "LUNCH friday"}, lambda r, s: [m["id"] for m in r["messages"]] == ["m2"]),
    (
        "mail_read",
        {"id": "m2"},
        lambda r, s: r["subject"] == "Lunch" and r["from"] == "ana@acme.test" and r["cc"] == ["bo@acme.test"],
    ),
    (
        "mail_send",
        {"to": "x@acme.test", "subject": "Hi", "body": "b"},
        lambda r, s: (
            r["sent"] is True
            and s["mail"]["messages"][-1]["to"] == ["x@acme.test"]
            and s["mail"]["messages"][-1]["folder"] == "sent"
            and s["mail"]["messages"][-1]["from"] == "me@acme.test"
        ),
    ),
    (
        "mail_send",
        {"to": ["x@acme.test", "y@acme.test"], "subject": "Hi", "body": "b", "cc": "z@acme.test"},
        lambda r, s: (
            s["mail"]["messages"][-1]["to"] == ["x@acme.test", "y@acme.test"]
            and s["mail"]["messages"][-1]["cc"] == ["z@acme.test"]
        ),
    ),
    (
        "mail_reply",
        {"id": "m2", "body": "Sure"},
        lambda r, s: (
            r["sent"] is True
            and s["mail"]["messages"][-1]["subject"] == "Re: Lunch"
            and s["mail"]["messages"][-1]["to"] == ["ana@acme.test"]
        ),
    ),
    (
        "mail_move",
        {"id": "m1", "folder": "archive"},
        lambda r, s: r == {"id": "m1", "folder": "archive"} and s["mail"]["messages"][0]["folder"] == "archive",
    ),
    (
        "mail_delete",
        {"id": "m2"},
        lambda r, s: r == {"id": "m2", "deleted": True} and "m2" not in [m["id"] for m in s["mail"]["messages"]],
    ),
    (
        "mail_draft",
        {"to": "ana@acme.test", "subject": "", "body": "Friday works.", "reply_to": "m2"},
        lambda r, s: (
            r == {"id": "m4", "folder": "drafts", "sent": False}
            and s["mail"]["messages"][-1]["subject"] == "Re: Lunch"
            and s["mail"]["messages"][-1]["in_reply_to"] == "m2"
            and s["mail"]["messages"][-1]["folder"] == "drafts"
        ),
    ),
    (
        "mail_draft",
        {"to": ["x@acme.test"], "subject": "Hi", "body": "b", "cc": "y@acme.test"},
        lambda r, s: (
            s["mail"]["messages"][-1]["cc"] == ["y@acme.test"] and "in_reply_to" not in s["mail"]["messages"][-1]
        ),
    ),
    (
        "mail_label",
        {"id": "m1", "add": ["billing", "Urgent", "billing"]},
        lambda r, s: (
            r == {"id": "m1", "labels": ["billing", "Urgent"]}
            and s["mail"]["messages"][0]["labels"] == ["billing", "Urgent"]
        ),
    ),
    (
        "mail_label",
        {"id": "m1", "remove": ["urgent"]},
        lambda r, s: r["labels"] == [] and "labels" not in s["mail"]["messages"][0],
    ),
    (
        "mail_send_draft",
        {"id": "m4"},
        lambda r, s: (
            r == {"id": "m4", "sent": True}
            and s["mail"]["messages"][-1]["folder"] == "sent"
            and s["mail"]["messages"][-1]["date"] == "2026-12-01T09:00:02Z"
        ),
    ),
    (
        "mail_mark_read",
        {"id": "m2"},
        lambda r, s: r == {"id": "m2", "read": True} and s["mail"]["messages"][1]["read"] is True,
    ),
    ("mail_mark_read", {"id": "m2", "read": False}, lambda r, s: "read" not in s["mail"]["messages"][1]),
    ("calendar_list", {}, lambda r, s: [e["id"] for e in r["events"]] == ["e1", "e2"]),
    (
        "calendar_list",
        {"start": "2026-12-02T00:00:00Z", "end": "2026-12-03T00:00:00Z"},
        lambda r, s: [e["id"] for e in r["events"]] == ["e2"],
    ),
    # offsets are instants: 16:30+01:00 == 15:30Z falls inside Retro
    (
        "calendar_list",
        {"start": "2026-12-02T16:30:00+01:00", "end": "2026-12-02T16:45:00+01:00"},
        lambda r, s: [e["id"] for e in r["events"]] == ["e2"],
    ),
    (
        "calendar_create",
        {
            "title": "Review",
            "start": "2026-12-09T15:00:00+01:00",
            "end": "2026-12-09T16:00:00+01:00",
            "attendees": ["ana@acme.test"],
            "location": "Room 2",
        },
        lambda r, s: (
            r["start"] == "2026-12-09T14:00:00Z"
            and r["end"] == "2026-12-09T15:00:00Z"
            and r == {**s["calendar"]["events"][-1], "description": "", "status": "confirmed"}
            and r["attendees"] == ["ana@acme.test"]
            and r["organizer"] == "me@acme.test"
        ),
    ),
    (
        "calendar_create",
        {
            "title": "Hold",
            "start": "2026-12-09T14:00:00Z",
            "end": "2026-12-09T15:00:00Z",
            "description": "Q4 plan",
            "status": "tentative",
        },
        lambda r, s: (
            s["calendar"]["events"][-1]["status"] == "tentative"
            and s["calendar"]["events"][-1]["description"] == "Q4 plan"
        ),
    ),
    (
        "calendar_update",
        {"id": "e2", "title": "Retro (moved)", "start": "2026-12-03T15:00:00Z", "end": "2026-12-03T16:00:00Z"},
        lambda r, s: r["title"] == "Retro (moved)" and s["calendar"]["events"][1]["start"] == "2026-12-03T15:00:00Z",
    ),
    ("calendar_update", {"id": "e2", "location": ""}, lambda r, s: s["calendar"]["events"][1]["location"] == ""),
    (
        "calendar_update",
        {"id": "e2", "status": "cancelled", "description": "Moved to January"},
        lambda r, s: r["status"] == "cancelled" and s["calendar"]["events"][1]["description"] == "Moved to January",
    ),
    ("calendar_update", {"id": "e2", "status": "confirmed"}, lambda r, s: "status" not in s["calendar"]["events"][1]),
    (
        "calendar_delete",
        {"id": "e1"},
        lambda r, s: r == {"id": "e1", "deleted": True} and [e["id"] for e in s["calendar"]["events"]] == ["e2"],
    ),
    ("contacts_search", {"query": "engineering"}, lambda r, s: r["total"] == 1 and r["people"][0]["id"] == "c2"),
    ("contacts_search", {}, lambda r, s: r["total"] == 2),
    ("contacts_get", {"id": "c1"}, lambda r, s: r["email"] == "ana@acme.test" and r["notes"] == ""),
    (
        "contacts_update",
        {"id": "c1", "notes": "Prefers calls", "phone": "+34 600 000 000"},
        lambda r, s: r["notes"] == "Prefers calls" and s["contacts"]["people"][0]["phone"] == "+34 600 000 000",
    ),
    (
        "contacts_update",
        {"id": "c2", "title": "Director"},
        lambda r, s: s["contacts"]["people"][1]["title"] == "Director",
    ),
    (
        "sheets_list",
        {},
        lambda r, s: (
            r
            == {
                "sheets": [
                    {"name": "budget", "columns": ["item", "amount"], "rows": 2},
                    {"name": "empty", "columns": ["a"], "rows": 0},
                ]
            }
        ),
    ),
    (
        "sheets_read",
        {"sheet": "budget"},
        lambda r, s: (
            r == {"sheet": "budget", "columns": ["item", "amount"], "rows": [["laptops", 4000], ["desks", 1500]]}
        ),
    ),
    (
        "sheets_update",
        {"sheet": "budget", "row": 1, "column": "amount", "value": 1750.5},
        lambda r, s: s["sheets"]["budget"]["rows"][1] == ["desks", 1750.5] and r["value"] == 1750.5,
    ),
    (
        "sheets_update",
        {"sheet": "budget", "row": 0, "column": "item", "value": None},
        lambda r, s: s["sheets"]["budget"]["rows"][0] == [None, 4000],
    ),
    (
        "sheets_append",
        {"sheet": "budget", "row": ["chairs", 300]},
        lambda r, s: r == {"sheet": "budget", "row": 2} and s["sheets"]["budget"]["rows"][2] == ["chairs", 300],
    ),
    (
        "docs_search",
        {"query": "flights"},
        lambda r, s: r["total"] == 1 and r["docs"][0]["id"] == "d1" and "snippet" in r["docs"][0],
    ),
    ("docs_read", {"id": "d1"}, lambda r, s: r["title"] == "Travel policy"),
    (
        "docs_create",
        {"title": "Notes", "body": "text"},
        lambda r, s: r == {"id": "d2", "title": "Notes"} and s["docs"]["docs"][-1]["body"] == "text",
    ),
    (
        "docs_update",
        {"id": "d1", "body": "Business class."},
        lambda r, s: r == {"id": "d1", "updated": True} and s["docs"]["docs"][0]["body"] == "Business class.",
    ),
    ("tickets_search", {"query": "vpn"}, lambda r, s: [t["id"] for t in r["tickets"]] == ["t1"]),
    ("tickets_search", {"status": "pending"}, lambda r, s: [t["id"] for t in r["tickets"]] == ["t2"]),
    ("tickets_get", {"id": "t2"}, lambda r, s: r["comments"][0]["text"] == "ordered"),
    (
        "tickets_update",
        {"id": "t1", "status": "resolved", "assignee": "bo@acme.test", "comment": "fixed", "priority": "high"},
        lambda r, s: (
            r["status"] == "resolved"
            and s["tickets"]["tickets"][0]["assignee"] == "bo@acme.test"
            and s["tickets"]["tickets"][0]["comments"][-1]["text"] == "fixed"
            and s["tickets"]["tickets"][0]["priority"] == "high"
        ),
    ),
    (
        "tickets_update",
        {"id": "t2", "priority": "P1", "category": "hardware", "customer": "Globex"},
        lambda r, s: (
            (r["priority"], r["category"], r["customer"]) == ("P1", "hardware", "Globex")
            and s["tickets"]["tickets"][1]["category"] == "hardware"
        ),
    ),
    (
        "tickets_tag",
        {"id": "t1", "add": ["vip", "network"]},
        lambda r, s: r["tags"] == ["vip", "network"] and s["tickets"]["tickets"][0]["tags"] == ["vip", "network"],
    ),
    ("tickets_search", {"query": "", "tag": "vip"}, lambda r, s: r == {"tickets": [], "total": 0}),
    (
        "tickets_create",
        {"title": "Printer", "body": "jammed", "assignee": "ana@acme.test"},
        lambda r, s: (
            r["id"] == "t3" and r["status"] == "open" and s["tickets"]["tickets"][-1]["assignee"] == "ana@acme.test"
        ),
    ),
    (
        "chat_read",
        {"channel": "#general"},
        lambda r, s: r["channel"] == "general" and r["messages"][0]["text"] == "Hello all",
    ),
    (
        "chat_post",
        {"channel": "random", "text": "hi"},
        lambda r, s: (
            r == {"channel": "random", "posted": True}
            and s["chat"]["channels"]["random"][-1]["text"] == "hi"
            and s["chat"]["channels"]["random"][-1]["from"] == "Me"
        ),
    ),
    # records (tests/workspace/test_records_service.py has the validation in detail)
    (
        "records_list",
        {"collection": "crm.customers", "where": {"tags": "VIP"}},
        lambda r, s: [x["id"] for x in r["records"]] == ["cus-1"],
    ),
    ("records_get", {"collection": "crm.customers", "id": "cus-2"}, lambda r, s: r["name"] == "Globex Corp"),
    ("records_search", {"collection": "crm.customers", "query": "globex"}, lambda r, s: r["total"] == 1),
    (
        "records_create",
        {"collection": "inventory.items", "fields": {"sku": "MON-27", "stock": 0}},
        lambda r, s: (
            r == {"id": "item-2", "sku": "MON-27", "stock": 0}
            and s["records"]["collections"]["inventory.items"]["records"][-1] == r
        ),
    ),
    (
        "records_update",
        {"collection": "crm.customers", "id": "cus-2", "fields": {"tier": "gold", "active": True}},
        lambda r, s: s["records"]["collections"]["crm.customers"]["records"][1]["tier"] == "gold",
    ),
    (
        "records_delete",
        {"collection": "inventory.items", "id": "itm-1"},
        lambda r, s: r["deleted"] is True and s["records"]["collections"]["inventory.items"]["records"] == [],
    ),
    (
        "web_search",
        {"query": "vendor prices", "limit": 1},
        lambda r, s: r["total"] == 2 and [x["url"] for x in r["results"]] == ["https://blog.test/notes"],
    ),
    (
        "web_fetch",
        {"url": "https://VENDOR.test/pricing#plans"},
        lambda r, s: (
            r
            == {
                "url": "https://vendor.test/pricing",
                "title": "Vendor pricing",
                "text": "The Pro plan costs 42 USD per seat.",
            }
        ),
    ),
]


SETUP: dict[str, tuple[str, dict[str, Any]]] = {
    "mail_send_draft": ("mail_draft", {"to": "x@acme.test", "subject": "s", "body": "b"}),
}
"""A call a tool's success rows need first (there is no draft to send in the rich workspace)."""


def test_success_table_covers_every_tool():
    assert {name for name, _, _ in SUCCESS} == set(ALL_TOOLS)


@pytest.mark.parametrize("as_string", [False, True], ids=["dict", "json"])
@pytest.mark.parametrize(("name", "args", "expect"), SUCCESS, ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(SUCCESS)])
def test_tool_success(name, args, expect, as_string):
    ep = Episode(rich_spec())
    setup = [ep.step(*SETUP[name])] if name in SETUP else []
    assert all("error" not in r for r in setup), setup
    result = ep.step(name, json.dumps(args) if as_string else args)
    assert "error" not in result, result
    strict_json(result)
    assert expect(result, ep.workspace.state), result
    entry = ep.workspace.audit[-1]
    assert (entry.index, entry.tool, entry.args, entry.status, entry.code, entry.fault) == (
        len(setup),
        name,
        args,
        "ok",
        None,
        False,
    )
    # the state stays serializable and canonical
    strict_json(ep.workspace.state)


def test_read_tools_do_not_change_state():
    for name, args, _ in SUCCESS:
        if TOOLS.get(name).kind != "read":
            continue
        ep = Episode(rich_spec())
        before = state_json(ep)
        ep.step(name, args)
        assert state_json(ep) == before, name


# --- error paths: each code a tool can return -------------------------------------------------------------

ERRORS: list[tuple[str, Any, int]] = [
    # files
    ("files_list", {"dir": "nope"}, 404),
    ("files_list", {"dir": "../x"}, 400),
    ("files_list", {"dir": "reports/q3.csv"}, 404),  # a file is not a directory
    ("files_read", {"path": "nope.txt"}, 404),
    ("files_read", {"path": "/etc/passwd"}, 400),
    ("files_read", {}, 400),  # missing required argument
    ("files_write", {"path": "reports", "content": "x"}, 409),  # a directory
    ("files_write", {"path": "", "content": "x"}, 400),
    ("files_write", {"path": "a.txt"}, 400),
    ("files_delete", {"path": "nope.txt"}, 404),
    ("files_delete", {"path": "reports"}, 404),
    ("files_move", {"src": "nope.txt", "dst": "x.txt"}, 404),
    ("files_move", {"src": "notes/todo.txt", "dst": "archive/old.txt"}, 409),
    ("files_move", {"src": "notes/todo.txt", "dst": "archive"}, 409),
    ("files_move", {"src": "notes/todo.txt", "dst": "../x"}, 400),
    # mail
    ("mail_search", {"query": 3}, 400),
    ("mail_search", {"folder": ["inbox"]}, 400),
    ("mail_read", {"id": "m9"}, 404),
    ("mail_read", {"id": 1}, 400),
    ("mail_send", {"to": "not an address", "subject": "s", "body": "b"}, 400),
    ("mail_send", {"to": [], "subject": "s", "body": "b"}, 400),
    ("mail_send", {"to": "a@acme.test", "subject": "s", "body": "b", "cc": ["bad"]}, 400),
    ("mail_send", {"to": "a@acme.test", "subject": "s"}, 400),
    ("mail_send", {"to": "a@acme.test", "subject": "s", "body": "b", "bcc": "c@acme.test"}, 400),  # unknown argument
    ("mail_reply", {"id": "m9", "body": "b"}, 404),
    ("mail_reply", {"id": "m3", "body": "b"}, 400),  # the sender has no address
    ("mail_move", {"id": "m9", "folder": "archive"}, 404),
    ("mail_move", {"id": "m1", "folder": ""}, 400),
    ("mail_move", {"id": "m1", "folder": "x" * 65}, 400),
    ("mail_delete", {"id": "m9"}, 404),
    ("mail_draft", {"to": "a@acme.test", "subject": "s", "body": "b", "reply_to": "m9"}, 404),
    ("mail_draft", {"to": [], "subject": "s", "body": "b"}, 400),
    ("mail_draft", {"to": "a@acme.test", "body": "b"}, 400),
    ("mail_send_draft", {"id": "m1"}, 409),  # not a draft
    ("mail_send_draft", {"id": "m9"}, 404),
    ("mail_move", {"id": "m1", "folder": "drafts"}, 409),  # only mail_draft makes drafts
    ("mail_label", {"id": "m1"}, 400),  # nothing to add or remove
    ("mail_label", {"id": "m1", "add": [""]}, 400),
    ("mail_label", {"id": "m9", "add": ["x"]}, 404),
    ("mail_mark_read", {"id": "m9"}, 404),
    ("mail_mark_read", {"id": "m1", "read": "yes"}, 400),
    # calendar
    ("calendar_list", {"start": "next tuesday"}, 400),
    ("calendar_list", {"end": "2026-13-01T00:00:00Z"}, 400),
    ("calendar_create", {"title": "x", "start": "2026-12-09T15:00:00Z", "end": "2026-12-09T14:00:00Z"}, 400),
    ("calendar_create", {"title": "x", "start": "2026-12-09T15:00:00Z", "end": "2026-12-09T15:00:00Z"}, 400),
    ("calendar_create", {"title": "x", "start": "tomorrow", "end": "2026-12-09T15:00:00Z"}, 400),
    ("calendar_create", {"title": "", "start": "2026-12-09T14:00:00Z", "end": "2026-12-09T15:00:00Z"}, 400),
    (
        "calendar_create",
        {"title": "x", "start": "2026-12-09T14:00:00Z", "end": "2026-12-09T15:00:00Z", "attendees": ["nobody"]},
        400,
    ),
    (
        "calendar_create",
        {"title": "x", "start": "2026-12-09T14:00:00Z", "end": "2026-12-09T15:00:00Z", "attendees": "a@acme.test"},
        400,
    ),
    ("calendar_update", {"id": "e9", "title": "x"}, 404),
    ("calendar_update", {"id": "e1"}, 400),  # nothing to update
    ("calendar_update", {"id": "e1", "end": "2026-12-01T08:00:00Z"}, 400),  # end before start
    ("calendar_update", {"id": "e1", "start": "soon"}, 400),
    ("calendar_delete", {"id": "e9"}, 404),
    # contacts
    ("contacts_search", {"query": None}, 400),
    ("contacts_get", {"id": "c9"}, 404),
    ("contacts_update", {"id": "c9", "notes": "x"}, 404),
    ("contacts_update", {"id": "c1"}, 400),  # nothing to update
    ("contacts_update", {"id": "c1", "email": "x@acme.test"}, 400),  # not something to edit
    # sheets
    ("sheets_list", {"sheet": "budget"}, 400),  # takes no arguments
    ("sheets_read", {"sheet": "nope"}, 404),
    ("sheets_update", {"sheet": "nope", "row": 0, "column": "item", "value": "x"}, 404),
    ("sheets_update", {"sheet": "budget", "row": 2, "column": "item", "value": "x"}, 404),
    ("sheets_update", {"sheet": "budget", "row": 0, "column": "nope", "value": "x"}, 404),
    ("sheets_update", {"sheet": "budget", "row": -1, "column": "item", "value": "x"}, 400),
    ("sheets_update", {"sheet": "budget", "row": 0, "column": "item"}, 400),
    ("sheets_append", {"sheet": "nope", "row": ["x", 1]}, 404),
    ("sheets_append", {"sheet": "budget", "row": ["x"]}, 400),
    ("sheets_append", {"sheet": "budget", "row": ["x", 1, 2]}, 400),
    # docs
    ("docs_search", {"query": ["a"]}, 400),
    ("docs_read", {"id": "d9"}, 404),
    ("docs_create", {"title": "", "body": "b"}, 400),
    ("docs_create", {"body": "b"}, 400),
    ("docs_update", {"id": "d9", "body": "b"}, 404),
    # tickets
    ("tickets_search", {"status": "done"}, 400),
    ("tickets_get", {"id": "t9"}, 404),
    ("tickets_update", {"id": "t9", "status": "closed"}, 404),
    ("tickets_update", {"id": "t1"}, 400),  # nothing to update
    ("tickets_update", {"id": "t1", "status": "done"}, 400),
    ("tickets_update", {"id": "t1", "priority": ""}, 400),  # an open vocabulary, but a word
    ("tickets_update", {"id": "t1", "category": "x" * 65}, 400),
    ("tickets_tag", {"id": "t9", "add": ["x"]}, 404),
    ("tickets_tag", {"id": "t1", "add": []}, 400),
    ("tickets_tag", {"id": "t1", "add": "vip"}, 400),
    ("tickets_create", {"title": "", "body": "b"}, 400),
    ("tickets_create", {"title": "x", "body": "b", "assignee": "x" * 255}, 400),
    # chat
    ("chat_read", {"channel": "nope"}, 404),
    ("chat_post", {"channel": "nope", "text": "hi"}, 404),
    ("chat_post", {"channel": "general", "text": ""}, 400),
    # records
    ("records_list", {"collection": "crm.nope"}, 404),
    ("records_list", {"collection": "crm.customers", "where": {"colour": "red"}}, 400),
    ("records_get", {"collection": "crm.customers", "id": "cus-9"}, 404),
    ("records_search", {"collection": "hr.people", "query": "x"}, 404),
    ("records_create", {"collection": "crm.customers", "fields": {"tier": "gold"}}, 400),
    ("records_create", {"collection": "crm.customers", "fields": {"name": "X"}, "id": "cus-1"}, 409),
    ("records_update", {"collection": "crm.customers", "id": "cus-1", "fields": {"seats": 4.5}}, 400),
    ("records_update", {"collection": "crm.customers", "id": "cus-1", "fields": {}}, 400),
    ("records_delete", {"collection": "crm.customers", "id": "cus-9"}, 404),
    # web
    ("web_search", {"query": "?!"}, 400),
    ("web_search", {"query": "vendor", "limit": 0}, 400),
    ("web_fetch", {"url": "https://vendor.test/nope"}, 404),
    ("web_fetch", {"url": "vendor.test/pricing"}, 400),
    ("web_fetch", {"url": "https://vendor.test/pricing", "offset": 99}, 400),
]


def test_error_table_covers_every_tool():
    assert {name for name, _, _ in ERRORS} == set(ALL_TOOLS)


@pytest.mark.parametrize(("name", "args", "code"), ERRORS, ids=[f"{n}-{c}-{i}" for i, (n, _, c) in enumerate(ERRORS)])
def test_tool_error(name, args, code):
    ep = Episode(rich_spec())
    before = state_json(ep)
    result = ep.step(name, args)
    assert is_error(result, code), result
    strict_json(result)
    assert state_json(ep) == before  # a failed call changes nothing
    entry = ep.workspace.audit[-1]
    assert (entry.index, entry.tool, entry.status, entry.code, entry.fault) == (0, name, "error", code, False)
    assert entry.error == result["error"]["message"]
    assert entry.args == args


# --- dispatch-level rejections (400) -----------------------------------------------------------------------

BAD_ARGUMENTS = [
    ("not json", "{not json"),
    ("truncated json", '{"path": "a.txt"'),
    ("json list", '["a.txt"]'),
    ("json string", '"a.txt"'),
    ("json number", "42"),
    ("json null", "null"),
    ("json true", "true"),
    ("python list", ["a.txt"]),
    ("python int", 7),
    ("bytes", b'{"path": "a.txt"}'),
]


@pytest.mark.parametrize(("label", "arguments"), BAD_ARGUMENTS, ids=[label for label, _ in BAD_ARGUMENTS])
def test_arguments_not_a_json_object(label, arguments):
    ep = Episode(rich_spec())
    result = ep.step("files_read", arguments)
    assert is_error(result, 400), result
    entry = ep.workspace.audit[-1]
    assert entry.status == "error" and entry.code == 400 and entry.args is None and entry.index == 0


@pytest.mark.parametrize("arguments", [None, "", "{}", {}])
def test_no_arguments_means_empty_object(arguments):
    ep = Episode(rich_spec())
    assert "error" not in ep.step("sheets_list", arguments)
    assert ep.workspace.audit[-1].args == {}


@pytest.mark.parametrize("name", ["files_explode", "FILES_READ", "", "mail", "files_read ", 42, None])
def test_unknown_tool(name):
    ep = Episode(rich_spec())
    before = state_json(ep)
    result = ep.workspace.call(name, {"path": "notes/todo.txt"})
    assert is_error(result, 400), result
    assert "unknown tool" in result["error"]["message"]
    assert state_json(ep) == before
    assert ep.workspace.audit[-1].status == "error" and ep.workspace.audit[-1].index == 0


def test_unknown_tool_message_suggests_a_close_name():
    ep = Episode(rich_spec())
    result = ep.step("files_raed", {"path": "x"})
    assert "files_read" in result["error"]["message"]


def test_tool_not_in_task_tools_is_rejected_even_with_valid_args():
    spec = make_spec(tools=["files_read", "mail_move", "mail_search"])
    ep = Episode(spec)
    before = state_json(ep)
    result = ep.step("files_delete", {"path": "notes/todo.txt"})
    assert is_error(result, 400) and "not available" in result["error"]["message"]
    assert state_json(ep) == before
    assert "notes/todo.txt" in ep.workspace.state["files"]
    entry = ep.workspace.audit[-1]
    assert (entry.tool, entry.args, entry.code) == ("files_delete", {"path": "notes/todo.txt"}, 400)
    # allowed tools still work
    assert "error" not in ep.step("files_read", {"path": "notes/todo.txt"})


def test_workspace_without_allowlist_allows_every_tool():
    ws = Workspace(json.loads(rich_spec().initial_state_json))
    assert "error" not in ws.call("contacts_get", {"id": "c1"})


def test_every_call_is_audited_in_order_including_rejected_and_faulted():
    ep = Episode(make_spec(tools=["files_read", "mail_move", "mail_search"]))
    calls = [
        ("files_read", {"path": "notes/todo.txt"}, "ok"),
        ("files_read", "{broken", "error"),
        ("nope_tool", {}, "error"),
        ("files_write", {"path": "a", "content": "x"}, "error"),  # not in tools
        ("files_read", {"path": "missing"}, "error"),
        ("mail_search", {"query": 1}, "error"),
        ("mail_search", {}, "ok"),
    ]
    for name, args, _ in calls:
        ep.step(name, args)
    audit = ep.workspace.audit
    assert [e.index for e in audit] == list(range(len(calls)))
    assert [e.tool for e in audit] == [c[0] for c in calls]
    assert [e.status for e in audit] == [c[2] for c in calls]
    for entry in audit:
        strict_json(entry.to_dict())
    evidence = ep.finish("done")
    assert evidence.calls == tuple(audit)


def test_fault_injected_calls_are_audited_and_change_nothing():
    spec = make_spec(faults={"rate": 1.0, "seed": 3})
    ep = Episode(spec)
    before = state_json(ep)
    for i, (name, args, _) in enumerate(SUCCESS):
        result = ep.step(name, args)
        assert result["error"]["code"] in (429, 500), (name, result)
        entry = ep.workspace.audit[-1]
        assert entry.index == i and entry.fault is True and entry.code == result["error"]["code"] and entry.args == args
    assert state_json(ep) == before


def test_validation_comes_before_faults():
    """A call rejected for its arguments is a 400, not a fault, even at rate 1."""
    ep = Episode(make_spec(faults={"rate": 1.0, "seed": 3}))
    assert is_error(ep.step("files_read", {"path": 3}), 400)
    assert ep.workspace.audit[-1].fault is False
    assert is_error(ep.step("nope", {}), 400)


def test_errors_are_returned_never_raised_for_garbage():
    ep = Episode(rich_spec())
    junk: list[Any] = [
        {"path": {"nested": [1, {"deeper": None}]}},
        {"path": 1e309},
        {"": ""},
        {"path": "a", "path2": "b"},
        "[" * 50,
        '{"path": "\\ud800"}',  # a lone surrogate
        '{"to": "a@acme.test", "subject": "s", "body": "b", "cc": [[["x"]]]}',
    ]
    for name in ALL_TOOLS:
        for args in junk:
            result = ep.step(name, args)
            assert isinstance(result, dict)
            if "error" in result:
                assert set(result["error"]) == {"code", "message"}
    assert len(ep.workspace.audit) == len(ALL_TOOLS) * len(junk)


# Regression (fixed): files_write/files_move refuse to put a file where a directory is (409) but not the mirror case: a file
# *under* an existing file is accepted, leaving `notes/todo.txt` both a file and a directory.
@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("files_write", {"path": "notes/todo.txt/sub.txt", "content": "x"}),
        ("files_move", {"src": "reports/q3.csv", "dst": "archive/old.txt/q3.csv"}),
    ],
    ids=["write-under-a-file", "move-under-a-file"],
)
def test_a_file_cannot_become_a_directory(name, args):
    ep = Episode(rich_spec())
    before = state_json(ep)
    assert is_error(ep.step(name, args), 409)
    assert state_json(ep) == before


def test_new_records_are_stamped_with_the_workspace_clock():
    ep = Episode(rich_spec())
    ep.step("mail_search", {})
    ep.step("mail_send", {"to": "x@acme.test", "subject": "s", "body": "b"})
    # now + one second per call so far (this is the second call)
    assert ep.workspace.state["mail"]["messages"][-1]["date"] == "2026-12-01T09:00:02Z"


def test_new_ids_do_not_collide_with_existing_ones():
    ep = Episode(rich_spec())
    ids = {ep.step("docs_create", {"title": f"n{i}", "body": ""})["id"] for i in range(5)}
    assert len(ids) == 5 and "d1" not in ids


# Regression (fixed): an id freed by a delete is handed to the next new record, so id-based checks and diffs confuse the
# new record with the deleted one: `mail_sent` ignores the new message (its id is in the initial state) and
# `event_absent` for the cancelled event fails. New ids must never repeat an initial (or earlier) id.
def test_new_ids_never_reuse_a_deleted_id():
    ep = Episode(rich_spec())
    ep.step("calendar_delete", {"id": "e2"})
    created = ep.step(
        "calendar_create", {"title": "New", "start": "2026-12-03T09:00:00Z", "end": "2026-12-03T10:00:00Z"}
    )
    ep.step("mail_delete", {"id": "m3"})
    sent = ep.step("mail_send", {"to": "x@acme.test", "subject": "s", "body": "b"})
    initial_ids = {"e1", "e2", "m1", "m2", "m3"}
    assert created["id"] not in initial_ids
    assert sent["id"] not in initial_ids


# --- JSON schemas (OpenAI function format) -----------------------------------------------------------------


def _example_args() -> dict[str, list[dict[str, Any]]]:
    examples: dict[str, list[dict[str, Any]]] = {}
    for name, args, _ in SUCCESS:
        examples.setdefault(name, []).append(args)
    return examples


def test_schemas_are_openai_function_format():
    schemas = tool_schemas()
    assert [s["function"]["name"] for s in schemas] == ALL_TOOLS
    for schema in schemas:
        assert schema["type"] == "function"
        fn = schema["function"]
        assert set(fn) == {"name", "description", "parameters"}
        assert isinstance(fn["description"], str) and fn["description"]
        params = fn["parameters"]
        assert params["type"] == "object"
        assert params["additionalProperties"] is False
        json.dumps(schema)


def test_tool_schemas_subset_in_given_order():
    names = ["mail_send", "files_read"]
    assert [s["function"]["name"] for s in tool_schemas(names)] == names


@pytest.mark.parametrize("name", ALL_TOOLS)
def test_schema_is_valid_json_schema(name):
    Draft202012Validator.check_schema(TOOLS.get(name).openai_schema()["function"]["parameters"])


@pytest.mark.parametrize("name", ALL_TOOLS)
def test_schema_required_names_are_properties(name):
    params = TOOLS.get(name).openai_schema()["function"]["parameters"]
    # Regression (fixed): `_strip_titles` drops every key named "title", including the *property* `title` of
    # calendar_create / calendar_update / docs_create / tickets_create; with additionalProperties=false the
    # published schema then rejects every valid call of those tools.
    assert set(params["required"]) <= set(params["properties"]), params
    model_fields = TOOLS.get(name).args.model_fields
    assert set(params["properties"]) == set(model_fields)
    assert set(params["required"]) == {f for f, info in model_fields.items() if info.is_required()}


# Regression (fixed): fails for calendar_create / calendar_update / docs_create / tickets_create: their published schemas lost
# the `title` property (see test_schema_required_names_are_properties), so no valid call validates.
@pytest.mark.parametrize("name", ALL_TOOLS)
def test_schema_accepts_the_example_valid_arguments(name):
    validator = Draft202012Validator(TOOLS.get(name).openai_schema()["function"]["parameters"])
    for args in _example_args()[name]:
        errors = list(validator.iter_errors(args))
        assert not errors, (args, [e.message for e in errors])
        TOOLS.get(name).args.model_validate(args)


SCHEMA_REJECTS = [
    ("files_read", {"path": 1}),
    ("files_read", {}),
    ("files_read", {"path": "a", "extra": 1}),
    ("sheets_update", {"sheet": "budget", "row": "0", "column": "item", "value": "x"}),
    ("sheets_update", {"sheet": "budget", "row": True, "column": "item", "value": "x"}),
    ("sheets_update", {"sheet": "budget", "row": -1, "column": "item", "value": "x"}),
    ("sheets_update", {"sheet": "budget", "row": 0, "column": "item", "value": {"a": 1}}),
    ("sheets_append", {"sheet": "budget", "row": "x,1"}),
    ("mail_send", {"to": 5, "subject": "s", "body": "b"}),
    ("mail_send", {"to": [["a@acme.test"]], "subject": "s", "body": "b"}),
    ("mail_move", {"id": "m1", "folder": ""}),
    ("tickets_search", {"status": "done"}),
    ("chat_post", {"channel": "general", "text": ""}),
    (
        "calendar_create",
        {"title": "x", "start": "2026-12-09T14:00:00Z", "end": "2026-12-09T15:00:00Z", "attendees": "a@acme.test"},
    ),
]


@pytest.mark.parametrize(("name", "args"), SCHEMA_REJECTS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(SCHEMA_REJECTS)])
def test_schema_and_tool_agree_on_invalid_arguments(name, args):
    validator = Draft202012Validator(TOOLS.get(name).openai_schema()["function"]["parameters"])
    assert list(validator.iter_errors(args)), f"schema accepts {args}"
    ep = Episode(rich_spec())
    assert is_error(ep.step(name, args), 400)


def test_a_result_with_an_error_field_of_its_own_is_a_success():
    """Only `error_result`'s shape is a tool error: a record with a field named `error` (a scheduler job's last error,
    in Claw-Eval's fixtures) is read as it is, and the call is audited ok."""
    from coworkenv.workspace.runtime import Workspace
    from coworkenv.workspace.tool_errors import error_of, error_result

    job = {"id": "job-1", "status": "failed", "error": "timeout after 30 s"}
    collection = {"fields": {"status": {"type": "string"}, "error": {"type": "string"}}, "records": [job]}
    ws = Workspace({"records": {"collections": {"scheduler.jobs": collection}}})
    result = ws.call("records_get", {"collection": "scheduler.jobs", "id": "job-1"})
    assert result["error"] == "timeout after 30 s" and ws.audit[-1].ok
    assert error_of(error_result(404, "no such record")) == {"code": 404, "message": "no such record"}
    assert error_of({"error": {"detail": "not ours"}}) is None and error_of([1]) is None
