"""`event_exists`: passing and failing evidence; its `recompute` and `strengthen` hooks through the registry."""

from __future__ import annotations

import pytest

from coworkenv.checks import DROP
from tests.support.checks import (
    Row,
    add_event,
    assert_pass_fail,
    cases,
    del_event,
    episode,
    holds,
    only_after,
    recompute,
    registered,
    strengthen,
    with_state,
)

ROWS: list[Row] = [
    (
        "event_exists",
        {
            "kind": "event_exists",
            "title_contains": "review",
            "start": "2026-12-09T15:00:00+01:00",
            "end": "2026-12-09T15:00:00Z",
            "attendees_include": ["Ana@acme.test"],
        },
        with_state(add_event(title="Design Review", attendees=["ana@acme.test", "bo@acme.test"])),
        with_state(add_event(title="Design Review", attendees=["bo@acme.test"])),
    ),
    (
        "event_exists-instant",
        {"kind": "event_exists", "start": "2026-12-09T14:00:00Z"},
        with_state(add_event(start="2026-12-09T15:00:00+01:00")),
        with_state(add_event(start="2026-12-09T15:00:00Z", end="2026-12-09T16:00:00Z")),
    ),
]

REVIEW = add_event(
    title="Design Review", start="2026-12-09T10:00:00Z", end="2026-12-09T11:00:00Z", attendees=["ana@acme.test"]
)


@pytest.mark.parametrize(("fields", "passing", "failing"), cases(ROWS))
def test_evaluate(fields, passing, failing):
    assert_pass_fail(fields, passing, failing)


def test_registry_entry():
    assert registered("event_exists") == {
        "hooks": {"recompute", "strengthen"},
        "guard": False,
        "answer": False,
        "evidence_for": set(),
    }


@pytest.mark.parametrize(
    ("expected", "recomputed"),
    [
        (
            {"title_contains": "review", "start": "2026-12-09T09:00:00Z"},
            {"title_contains": "review", "start": "2026-12-09T10:00:00Z"},
        ),
        (
            {"title_contains": "sync", "end": "x"},
            {"title_contains": "Design Review", "end": "2026-12-09T11:00:00Z"},
        ),  # the only one
        ({"attendees_include": ["ANA@acme.test", "bo@acme.test"]}, {"attendees_include": ["ANA@acme.test"]}),
    ],
)
def test_recompute_reads_the_event_the_oracle_made(expected, recomputed):
    ev = episode(REVIEW)
    fixed = recompute({"kind": "event_exists", **expected}, ev)
    assert fixed == {"id": "chk-event_exists", "kind": "event_exists", **recomputed} and holds(fixed, ev)


def test_recompute_gives_up_or_drops():
    assert (
        recompute({"kind": "event_exists", "title_contains": "review"}, episode(del_event("e1"))) is DROP
    )  # nothing made
    two = episode(REVIEW, add_event(id="e98", title="Lunch"))
    assert recompute({"kind": "event_exists", "title_contains": "sync"}, two) is None  # which of the two?


def test_strengthen_pins_the_times_of_the_oracles_event():
    # holds untouched: the workspace already has a "Standup"
    fields = {"kind": "event_exists", "title_contains": "standup"}
    ev = episode(add_event(title="Standup (moved)", start="2026-12-03T09:00:00Z", end="2026-12-03T09:15:00Z"))
    stronger = strengthen(fields, ev)
    assert stronger == {
        "id": "chk-event_exists",
        **fields,
        "start": "2026-12-03T09:00:00Z",
        "end": "2026-12-03T09:15:00Z",
    }
    assert only_after(stronger, ev)
    assert strengthen(fields, episode()) is None
