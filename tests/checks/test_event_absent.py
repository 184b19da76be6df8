"""`event_absent`: passing and failing evidence; its `references` hook through the registry (an event id that exists
nowhere makes the check hold trivially)."""

from __future__ import annotations

import pytest

from tests.support.checks import (
    Row,
    add_event,
    assert_pass_fail,
    cases,
    del_event,
    missing,
    registered,
    unchanged_state,
    with_state,
)

ROWS: list[Row] = [
    ("event_absent-event_id", {"kind": "event_absent", "event_id": "e1"}, with_state(del_event("e1")), unchanged_state),
    (
        "event_absent-title",
        {"kind": "event_absent", "title_contains": "STAND"},
        with_state(del_event("e1")),
        unchanged_state,
    ),
    (
        "event_absent-check-id",
        {"kind": "event_absent", "id": "e2"},
        with_state(del_event("e2")),
        with_state(del_event("e1")),
    ),
]


@pytest.mark.parametrize(("fields", "passing", "failing"), cases(ROWS))
def test_evaluate(fields, passing, failing):
    assert_pass_fail(fields, passing, failing)


def test_registry_entry():
    assert registered("event_absent") == {
        "hooks": {"references"},
        "guard": False,
        "answer": False,
        "evidence_for": set(),
    }


@pytest.mark.parametrize(
    ("fields", "oracle", "found"),
    [
        ({"event_id": "e1"}, (), []),
        ({"id": "e2"}, (), []),
        ({"event_id": "e99"}, (add_event(),), []),  # the oracle creates it (and a later step removes it)
        ({"title_contains": "nothing like it"}, (), []),  # a title names no id to look up
        ({"event_id": "e404"}, (), ["e404"]),
        ({"id": "e404"}, (), ["e404"]),
    ],
)
def test_references(fields, oracle, found):
    reported = missing({"kind": "event_absent", **fields}, *oracle)
    assert [ref for ref, _, _ in reported] == found
    assert all(
        problem == "event id exists neither initially nor after the oracle: the check holds trivially"
        for _, problem, _ in reported
    )
