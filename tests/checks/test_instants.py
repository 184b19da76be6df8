"""Event times compare as instants: the same moment written with any offset (or none, meaning UTC) is equal."""

from __future__ import annotations

import pytest

from coworkenv.checks import evaluate
from tests.support.builders import check
from tests.support.checks import add_event, episode


@pytest.mark.parametrize(
    ("stored", "asked", "same"),
    [
        ("2026-12-09T14:00:00Z", "2026-12-09T15:00:00+01:00", True),
        ("2026-12-09T14:00:00Z", "2026-12-09T14:00:00+00:00", True),
        ("2026-12-09T14:00:00Z", "2026-12-09T14:00:00", True),  # no offset: UTC
        ("2026-12-09T14:00:00Z", "2026-12-09T09:00:00-05:00", True),
        ("2026-12-09T14:00:00Z", "2026-12-09T15:00:00Z", False),
        ("2026-12-09T14:00:00Z", "2026-12-09T14:00:01Z", False),
        ("2026-12-09T14:00:00Z", "not a time", False),
    ],
)
def test_event_times_compare_as_instants(stored, asked, same):
    ev = episode(add_event(start=stored, end="2026-12-09T23:00:00Z"))
    assert evaluate(check(kind="event_exists", start=asked), ev)[0] is same
    assert (
        evaluate(check(kind="event_exists", end=asked), episode(add_event(start="2026-12-09T00:00:00Z", end=stored)))[0]
        is same
    )
