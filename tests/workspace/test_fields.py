"""Sparse record fields (tags, labels, read, status, notes, …) and mail drafts: older workspaces keep their exact JSON
and hashes, readers see the defaults, tools set and clear them canonically, and a draft is never sent mail."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from pydantic import ValidationError

from coworkenv.checks import evaluate
from coworkenv.episode.episode import Episode
from coworkenv.spec.io import load_tasks
from coworkenv.spec.task import TaskSpec
from coworkenv.workspace.record_types import sparse_defaults
from coworkenv.workspace.service import SERVICES
from coworkenv.workspace.services.calendar import Event
from coworkenv.workspace.services.contacts import Person
from coworkenv.workspace.services.mail import MailMessage
from coworkenv.workspace.services.tickets import Ticket
from coworkenv.workspace.state import WorkspaceSpec
from tests.support import ROOT
from tests.support.builders import check, evidence, make_spec, rich_spec, rich_workspace, spec_dict, t1

SPARSE = {
    MailMessage: {"labels": [], "read": False, "in_reply_to": None},
    Ticket: {"tags": [], "category": "", "customer": ""},
    Event: {"description": "", "organizer": "", "status": "confirmed"},
    Person: {"notes": ""},
}

# initial_state_hash of workspaces that set none of these fields (as of the `records` and `web` services, whose empty
# sections are part of every workspace's JSON): a new sparse field must not reach an older workspace's JSON.
PINNED = {
    "t1": "60a88d4ba054bb6f8805d8ea3cd73d46d6ecac7e1b56606554c1fb9d35bc47d2",
    "example-01-mail-forward-invoices": "64fec31e254c9f9dc1474d15bbbecd64df2c573a1f66c0654b2c734b8ff48616",
    "example-02-calendar-reschedule-planning": "5068f591b671b85b8d85b55a20728e73e000be01b84b83e713ffd8c5253a29a7",
    "example-06-tickets-triage-queue": "41e093dbe9f820ca2179b2733d2423fa1faf281a5f197a6db5237aa1969cf953",
}


def test_the_sparse_fields_and_their_defaults():
    assert {model: sparse_defaults(model) for model in SPARSE} == SPARSE
    assert {
        name: SERVICES.get(name).record_defaults for name in ("mail", "tickets", "calendar", "contacts", "docs")
    } == {
        "mail": SPARSE[MailMessage],
        "tickets": SPARSE[Ticket],
        "calendar": SPARSE[Event],
        "contacts": SPARSE[Person],
        "docs": {},
    }


def test_older_workspaces_keep_their_json_and_hashes():
    examples = {t.id: t for t in load_tasks(ROOT / "examples" / "tasks")}
    got = {"t1": t1().initial_state_hash, **{tid: examples[tid].initial_state_hash for tid in PINNED if tid != "t1"}}
    assert got == PINNED


def _with_defaults_spelled_out(workspace: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(workspace)
    for m in out["mail"]["messages"]:
        m.update(labels=[], read=False, in_reply_to=None)
    for t in out["tickets"]["tickets"]:
        t.update(tags=[], category="", customer="")
    for e in out["calendar"]["events"]:
        e.update(description="", organizer="", status="confirmed")
    for p in out["contacts"]["people"]:
        p["notes"] = ""
    return out


def test_defaults_spelled_out_give_the_same_json_as_absent_ones():
    plain = WorkspaceSpec.model_validate(rich_workspace()).model_dump(mode="json", by_alias=True)
    spelled = WorkspaceSpec.model_validate(_with_defaults_spelled_out(rich_workspace())).model_dump(
        mode="json", by_alias=True
    )
    assert spelled == plain
    assert "labels" not in plain["mail"]["messages"][0] and "status" not in plain["calendar"]["events"][0]


def test_set_fields_are_kept_and_typed():
    ws = rich_workspace()
    ws["mail"]["messages"][0].update(labels=["billing"], read=True)
    ws["tickets"]["tickets"][0].update(tags=["vip"], category="network", customer="Globex", priority="P1")
    ws["calendar"]["events"][0].update(status="tentative", organizer="ana@acme.test", description="Daily")
    ws["contacts"]["people"][0]["notes"] = "Prefers calls"
    dumped = WorkspaceSpec.model_validate(ws).model_dump(mode="json", by_alias=True)
    assert dumped["mail"]["messages"][0]["labels"] == ["billing"] and dumped["mail"]["messages"][0]["read"] is True
    assert dumped["tickets"]["tickets"][0]["priority"] == "P1"  # an open vocabulary
    assert (
        dumped["calendar"]["events"][0]["status"] == "tentative"
        and dumped["contacts"]["people"][0]["notes"] == "Prefers calls"
    )
    for path, bad in [
        (("mail", "messages", 0, "labels"), "billing"),
        (("mail", "messages", 0, "read"), "yes"),
        (("tickets", "tickets", 0, "tags"), [1]),
        (("calendar", "events", 0, "status"), None),
    ]:
        broken = copy.deepcopy(ws)
        node = broken
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = bad
        with pytest.raises(ValidationError, match=path[-1]):
            WorkspaceSpec.model_validate(broken)


def test_readers_see_the_defaults():
    ep = Episode(rich_spec())
    assert ep.step("mail_read", {"id": "m1"})["labels"] == [] and ep.step("mail_read", {"id": "m1"})["read"] is False
    assert ep.step("tickets_get", {"id": "t1"})["tags"] == []
    assert ep.step("calendar_list", {})["events"][0]["status"] == "confirmed"
    assert ep.step("contacts_search", {"query": "ana"})["people"][0]["notes"] == ""
    assert "labels" not in ep.workspace.state["mail"]["messages"][0]  # reading adds nothing to the state


def test_setting_a_field_back_to_its_default_restores_the_initial_json():
    ep = Episode(rich_spec())
    initial = json.loads(rich_spec().initial_state_json)
    for name, args in [
        ("mail_label", {"id": "m1", "add": ["x"]}),
        ("mail_label", {"id": "m1", "remove": ["X"]}),
        ("mail_mark_read", {"id": "m1"}),
        ("mail_mark_read", {"id": "m1", "read": False}),
        ("tickets_tag", {"id": "t1", "add": ["vip"]}),
        ("tickets_tag", {"id": "t1", "remove": ["vip"]}),
        ("calendar_update", {"id": "e1", "status": "tentative"}),
        ("calendar_update", {"id": "e1", "status": "confirmed"}),
        ("contacts_update", {"id": "c1", "notes": "x"}),
        ("contacts_update", {"id": "c1", "notes": ""}),
    ]:
        assert "error" not in ep.step(name, args), name
    evidence = ep.finish("done")
    assert evidence.final_state == initial and evidence.diff == {}


def test_mail_search_filters_by_label_and_unread():
    ep = Episode(rich_spec())
    ep.step("mail_label", {"id": "m2", "add": ["Social"]})
    ep.step("mail_mark_read", {"id": "m1"})
    assert [m["id"] for m in ep.step("mail_search", {"label": "social"})["messages"]] == ["m2"]
    assert [m["id"] for m in ep.step("mail_search", {"unread": True})["messages"]] == ["m2", "m3"]
    assert [m["id"] for m in ep.step("mail_search", {"unread": False})["messages"]] == ["m1"]


def test_tickets_search_reads_customer_category_and_tags():
    ep = Episode(rich_spec())
    ep.step("tickets_update", {"id": "t2", "customer": "Globex", "category": "hardware"})
    ep.step("tickets_tag", {"id": "t1", "add": ["vip"]})
    assert [t["id"] for t in ep.step("tickets_search", {"query": "globex hardware"})["tickets"]] == ["t2"]
    assert [t["id"] for t in ep.step("tickets_search", {"tag": "VIP"})["tickets"]] == ["t1"]


# --- drafts -------------------------------------------------------------------------------------------------

SENT = {"kind": "mail_sent", "to": "ana@acme.test"}
DRAFTED = {"kind": "mail_drafted", "to": "ana@acme.test", "body_contains": ["friday"]}


def _holds(fields: dict[str, Any], ep: Episode) -> bool:
    """The check against the episode's state so far (the episode goes on)."""
    return evaluate(check(**fields), evidence(ep.spec, copy.deepcopy(ep.workspace.state)))[0]


def test_a_draft_is_not_sent_until_mail_send_draft():
    ep = Episode(rich_spec())
    draft = ep.step("mail_draft", {"to": "ana@acme.test", "subject": "", "body": "Friday works.", "reply_to": "m2"})
    assert _holds(DRAFTED, ep) and not _holds(SENT, ep) and _holds({**SENT, "count": 0}, ep)
    assert is_error_code(ep.step("mail_move", {"id": draft["id"], "folder": "sent"}), 409)  # no sending by moving
    assert ep.step("mail_send_draft", {"id": draft["id"]}) == {"id": draft["id"], "sent": True}
    assert _holds({**SENT, "count": 1}, ep) and not _holds(DRAFTED, ep)
    assert is_error_code(ep.step("mail_send_draft", {"id": draft["id"]}), 409)  # sent once


def test_a_discarded_draft_is_neither_drafted_nor_sent():
    ep = Episode(rich_spec())
    draft = ep.step("mail_draft", {"to": "ana@acme.test", "subject": "Lunch", "body": "Friday?"})
    ep.step("mail_delete", {"id": draft["id"]})
    assert not _holds(DRAFTED, ep) and _holds({**SENT, "count": 0}, ep)


def test_replies_record_what_they_answer():
    ep = Episode(rich_spec())
    ep.step("mail_reply", {"id": "m2", "body": "Sure"})
    assert ep.workspace.state["mail"]["messages"][-1]["in_reply_to"] == "m2"
    assert _holds(
        {
            "kind": "record",
            "service": "mail",
            "collection": "messages",
            "match": {"in_reply_to": "m2"},
            "fields": {"folder": "sent"},
        },
        ep,
    )


def is_error_code(result: dict[str, Any], code: int) -> bool:
    return set(result) == {"error"} and result["error"]["code"] == code


def test_a_spec_may_seed_drafts_and_richer_records():
    data = spec_dict()
    data["workspace"]["mail"]["messages"].append(
        {
            "id": "m4",
            "folder": "drafts",
            "from": "me@acme.test",
            "to": ["ana@acme.test"],
            "subject": "Re: Lunch",
            "body": "Friday",
            "date": "2026-11-30T12:00:00Z",
            "in_reply_to": "m2",
        }
    )
    data["workspace"]["tickets"]["tickets"][0].update(tags=["vip"], priority="P2", customer="Globex")
    spec = TaskSpec.model_validate(data)
    assert spec.initial_state["mail"]["messages"][-1]["in_reply_to"] == "m2"
    ep = Episode(make_spec(workspace=data["workspace"]))
    assert ep.step("mail_send_draft", {"id": "m4"})["sent"] is True
    assert _holds({**SENT, "count": 1, "subject_contains": "lunch"}, ep)
