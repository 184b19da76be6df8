"""`record`: passing and failing evidence; its `references`, `recompute` and `strengthen` hooks through the registry."""

from __future__ import annotations

import copy

import pytest

from coworkenv.checks import DROP
from tests.support.checks import (
    Row,
    assert_pass_fail,
    cases,
    check,
    episode,
    holds,
    missing,
    only_after,
    recompute,
    registered,
    strengthen,
    ticket,
    unchanged_state,
    with_state,
)


def customer(rid: str, collection: str = "crm.customers", **fields):
    """A mutator of one record of the rich workspace's `records` collections."""

    def mutate(s):
        next(r for r in s["records"]["collections"][collection]["records"] if r["id"] == rid).update(fields)

    return mutate


ROWS: list[Row] = [
    (
        "record",
        {
            "kind": "record",
            "service": "tickets",
            "collection": "tickets",
            "match": {"id": "t1"},
            "fields": {"status": "closed", "assignee": "*@acme.test"},
        },
        with_state(ticket("t1", status="closed", assignee="bo@acme.test")),
        with_state(ticket("t1", status="closed")),
    ),
    (
        "record-no-match",
        {"kind": "record", "service": "docs", "collection": "docs", "match": {"title": "minutes*"}},
        with_state(lambda s: s["docs"]["docs"].append({"id": "d2", "title": "Minutes 1", "body": ""})),
        unchanged_state,
    ),
    (
        "record-contacts",
        {
            "kind": "record",
            "service": "contacts",
            "collection": "people",
            "match": {"id": "c1"},
            "fields": {"team": "finance"},
        },
        unchanged_state,
        with_state(lambda s: s["contacts"]["people"][0].__setitem__("team", "sales")),
    ),
    # a collection the task declares (service `records`)
    (
        "record-records",
        {
            "kind": "record",
            "service": "records",
            "collection": "crm.customers",
            "match": {"id": "cus-2"},
            "fields": {"tier": "gold", "active": True},
        },
        with_state(customer("cus-2", tier="gold", active=True)),
        with_state(customer("cus-2", tier="gold")),
    ),
    (
        "record-records-list-field",
        {
            "kind": "record",
            "service": "records",
            "collection": "crm.customers",
            "match": {"tags": "VIP"},
            "fields": {"seats": 40},
        },
        unchanged_state,
        with_state(customer("cus-1", seats=41)),
    ),
    # the same id in another collection is another record
    (
        "record-records-collection",
        {
            "kind": "record",
            "service": "records",
            "collection": "inventory.items",
            "match": {"id": "itm-1"},
            "fields": {"stock": 3},
        },
        with_state(customer("cus-1", stock=9)),
        with_state(customer("itm-1", "inventory.items", stock=9)),
    ),
    # sparse fields: absent from the JSON at their default, read as that default
    (
        "record-sparse-default",
        {
            "kind": "record",
            "service": "mail",
            "collection": "messages",
            "match": {"id": "m1"},
            "fields": {"read": False, "labels": [], "in_reply_to": None},
        },
        unchanged_state,
        with_state(lambda s: s["mail"]["messages"][0].__setitem__("read", True)),
    ),
    (
        "record-sparse-list",
        {
            "kind": "record",
            "service": "tickets",
            "collection": "tickets",
            "match": {"tags": "vip"},
            "fields": {"category": "network", "customer": "Globex*"},
        },
        with_state(ticket("t1", tags=["refund", "VIP"], category="Network", customer="Globex Corp")),
        with_state(ticket("t1", tags=["refund"], category="network", customer="Globex Corp")),
    ),
    (
        "record-sparse-status",
        {
            "kind": "record",
            "service": "calendar",
            "collection": "events",
            "match": {"status": "confirmed"},
            "fields": {"id": "e2"},
        },
        unchanged_state,
        with_state(lambda s: s["calendar"]["events"][1].__setitem__("status", "cancelled")),
    ),
]

CUSTOMERS = {"kind": "record", "service": "records", "collection": "crm.customers"}

TICKET = {"kind": "record", "service": "tickets", "collection": "tickets"}


def new_ticket(**fields):
    record = {"id": "t3", "title": "", "body": "", "status": "open", "assignee": None, "comments": []} | fields
    return lambda s: s["tickets"]["tickets"].append(copy.deepcopy(record))


@pytest.mark.parametrize(("fields", "passing", "failing"), cases(ROWS))
def test_evaluate(fields, passing, failing):
    assert_pass_fail(fields, passing, failing)


def test_registry_entry():
    assert registered("record") == {
        "hooks": {"references", "recompute", "strengthen"},
        "guard": False,
        "answer": False,
        "evidence_for": set(),
    }


def test_references_need_a_matching_record():
    assert missing({**TICKET, "match": {"title": "vpn*"}}) == []
    assert missing({**TICKET, "match": {"title": "printer*"}}, new_ticket(title="Printer jam")) == []
    assert missing({**TICKET, "match": {"id": "t9"}}) == [
        ({"id": "t9"}, "no tickets record matches, initially or after the oracle", "")
    ]


def test_recompute_takes_the_oracles_values_literally():
    fields = {
        **TICKET,
        "match": {"id": "t1"},
        "fields": {"status": "resolved", "assignee": "*@acme.test", "title": "x", "nope": 1},
    }
    ev = episode(ticket("t1", status="closed", assignee="bo@acme.test", title="[VPN] down*"))
    fixed = recompute(fields, ev)
    # a glob that still matches stays; a value with glob characters is escaped; a field the record lacks goes
    assert fixed["fields"] == {"status": "closed", "assignee": "*@acme.test", "title": "[[]VPN] down[*]"}
    assert holds(fixed, ev)
    assert not holds(fixed, episode(ticket("t1", status="closed", assignee="bo@acme.test", title="[VPN] downtime")))


def test_recompute_drops_a_record_the_oracle_never_leaves():
    assert recompute({**TICKET, "match": {"id": "t9"}, "fields": {"status": "x"}}, episode()) is DROP


@pytest.mark.parametrize(
    ("fields", "oracle", "required"),
    [
        ({"match": {"id": "t1"}}, ticket("t1", status="closed"), {"status": "closed"}),
        (
            {"match": {"id": "t1"}, "fields": {"assignee": None}},
            ticket("t1", status="closed"),
            {"assignee": None, "status": "closed"},
        ),
        # a created record: every field it was given (a null one is no different from an absent one)
        (
            {"match": {"title": "printer*"}},
            new_ticket(title="Printer *jam*"),
            {"title": "Printer [*]jam[*]", "body": "", "status": "open", "comments": []},
        ),
        # a sparse field the oracle set; those it left at their default are not required of a created record
        ({"match": {"id": "t1"}}, ticket("t1", tags=["vip"]), {"tags": ["vip"]}),
        (
            {"match": {"title": "printer*"}},
            new_ticket(title="Printer", category="hardware"),
            {"title": "Printer", "body": "", "status": "open", "comments": [], "category": "hardware"},
        ),
    ],
    ids=["changed", "kept-fields", "created", "sparse-set", "sparse-created"],
)
def test_strengthen_requires_what_the_oracle_changed(fields, oracle, required):
    ev = episode(oracle)
    stronger = strengthen({**TICKET, **fields}, ev)
    assert stronger["fields"] == required and only_after(stronger, ev)


def test_strengthen_gives_up_when_the_oracle_changes_no_matching_record():
    assert strengthen({**TICKET, "match": {"id": "t1"}}, episode(ticket("t2", status="closed"))) is None


def test_references_name_a_missing_collection_before_a_missing_record():
    assert missing({**CUSTOMERS, "match": {"name": "northwind"}}) == []
    assert missing({**CUSTOMERS, "match": {"id": "cus-9"}}) == [
        ({"id": "cus-9"}, "no crm.customers record matches, initially or after the oracle", "")
    ]
    ghost = {**CUSTOMERS, "collection": "crm.leads", "match": {"id": "cus-1"}}
    assert missing(ghost) == [("crm.leads", "records has no collection 'crm.leads', initially or after the oracle", "")]


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({**CUSTOMERS, "collection": "CRM customers"}, "not a records collection name"),
        ({**TICKET, "collection": "crm.customers"}, "service 'tickets' has collection 'tickets'"),
    ],
)
def test_the_collection_must_fit_its_service(fields, message):
    with pytest.raises(ValueError, match=message):
        check(**fields, match={"id": "x"})


def test_recompute_and_strengthen_read_the_declared_collection():
    ev = episode(customer("cus-2", tier="bronze", seats=7))
    assert recompute({**CUSTOMERS, "match": {"id": "cus-2"}, "fields": {"tier": "gold"}}, ev)["fields"] == {
        "tier": "bronze"
    }
    stronger = strengthen({**CUSTOMERS, "match": {"id": "cus-2"}}, ev)
    assert stronger["fields"] == {"tier": "bronze", "seats": 7} and only_after(stronger, ev)
