"""`unchanged`: passing and failing evidence; its `references` hook (only a path names something) and its `guard`
flag through the registry."""

from __future__ import annotations

import pytest

from tests.support.builders import check
from tests.support.checks import (
    Row,
    assert_pass_fail,
    cases,
    del_event,
    del_file,
    missing,
    registered,
    set_file,
    unchanged_state,
    with_state,
)

NOWHERE = "file exists nowhere: not initially, not after the oracle, not in any solution step"
NO_PEOPLE = "records has no collection 'hr.people', initially or after the oracle"


def stock(rid: str, value: int, collection: str = "inventory.items"):
    return lambda s: next(r for r in s["records"]["collections"][collection]["records"] if r["id"] == rid).__setitem__(
        "stock", value
    )


ROWS: list[Row] = [
    (
        "unchanged-service",
        {"kind": "unchanged", "service": "calendar"},
        with_state(set_file("x", "y")),
        with_state(del_event("e1")),
    ),
    (
        "unchanged-path",
        {"kind": "unchanged", "path": "notes/todo.txt"},
        with_state(set_file("other.txt", "x")),
        with_state(set_file("notes/todo.txt", "x")),
    ),
    (
        "unchanged-records",
        {"kind": "unchanged", "service": "records"},
        with_state(set_file("x", "y")),
        with_state(stock("itm-1", 9)),
    ),
    # one collection: a change in another collection of the same service is not its concern
    (
        "unchanged-collection",
        {"kind": "unchanged", "service": "records", "collection": "crm.customers"},
        with_state(stock("itm-1", 9)),
        with_state(stock("cus-1", 9, "crm.customers")),
    ),
    (
        "unchanged-path-deleted",
        {"kind": "unchanged", "path": "notes/todo.txt"},
        unchanged_state,
        with_state(del_file("notes/todo.txt")),
    ),
]


@pytest.mark.parametrize(("fields", "passing", "failing"), cases(ROWS))
def test_evaluate(fields, passing, failing):
    assert_pass_fail(fields, passing, failing)


def test_registry_entry():
    # a guard: it holds on an untouched workspace by design, so no repairer strengthens or drops it for that
    assert registered("unchanged") == {"hooks": {"references"}, "guard": True, "answer": False, "evidence_for": set()}


@pytest.mark.parametrize(
    ("fields", "found"),
    [
        ({"service": "chat"}, []),
        ({"path": "notes/todo.txt"}, []),
        ({"path": "nowhere/at/all.txt"}, [("nowhere/at/all.txt", NOWHERE, "")]),
        ({"path": "notes//todo.txt"}, [("notes//todo.txt", "path is not relative and normalized", "")]),
        ({"service": "records", "collection": "inventory.items"}, []),
        ({"service": "records", "collection": "hr.people"}, [("hr.people", NO_PEOPLE, "")]),
    ],
)
def test_references(fields, found):
    assert missing({"kind": "unchanged", **fields}) == found


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"path": "a.txt", "collection": "crm.customers"}, "`collection` goes with `service`"),
        ({"service": "records", "collection": "Bad Name"}, "not a records collection name"),
        ({"service": "files", "collection": "files"}, "service 'files' keeps no records"),
    ],
)
def test_a_collection_goes_with_a_service_that_has_it(fields, message):
    with pytest.raises(ValueError, match=message):
        check(kind="unchanged", **fields)
