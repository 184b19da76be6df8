"""`mail_sent`: passing and failing evidence; its `recompute` hook through the registry."""

from __future__ import annotations

import pytest

from coworkenv.checks import DROP
from tests.support.checks import (
    Row,
    assert_pass_fail,
    cases,
    episode,
    holds,
    recompute,
    registered,
    sent,
    unchanged_state,
    with_state,
)

ROWS: list[Row] = [
    (
        "mail_sent",
        {
            "kind": "mail_sent",
            "to": "accounting@acme.test",
            "subject_contains": "invoice",
            "body_contains": ["PAY", "7"],
        },
        with_state(sent(to=["Accounting@Acme.test"], subject="Fwd: Invoice 7", body="please pay #7")),
        with_state(sent(to=["accounting@acme.test"], subject="Fwd: Invoice 7", body="please review")),
    ),
    (
        "mail_sent-glob-list",
        {"kind": "mail_sent", "to": ["*@acme.test", "bo@*"], "cc": "ana@acme.test"},
        with_state(sent(to=["x@acme.test", "bo@acme.test"], cc=["ana@acme.test"])),
        with_state(sent(to=["x@acme.test", "bo@acme.test"])),
    ),
    (
        "mail_sent-count",
        {"kind": "mail_sent", "to": "x@acme.test", "count": 1},
        with_state(sent(to=["x@acme.test"])),
        with_state(sent(to=["x@acme.test"]), sent(to=["x@acme.test"], id="m98")),
    ),
    (
        "mail_sent-count-zero",
        {"kind": "mail_sent", "to": "*@external.test", "count": 0},
        unchanged_state,
        with_state(sent(to=["leak@external.test"])),
    ),
    (
        "mail_sent-initial-not-counted",
        {"kind": "mail_sent", "to": "me@acme.test"},
        with_state(sent(to=["me@acme.test"])),
        unchanged_state,
    ),
]

TO_ACCOUNTING = {"kind": "mail_sent", "to": "accounting@acme.test"}
ORACLE = episode(sent(to=["accounting@acme.test"], subject="Invoice 7", body="Please pay 1,250 EUR."))


@pytest.mark.parametrize(("fields", "passing", "failing"), cases(ROWS))
def test_evaluate(fields, passing, failing):
    assert_pass_fail(fields, passing, failing)


def test_registry_entry():
    assert registered("mail_sent") == {"hooks": {"recompute"}, "guard": False, "answer": False, "evidence_for": set()}


@pytest.mark.parametrize(
    ("expected", "recomputed"),
    [
        (
            {"subject_contains": "invoice", "body_contains": ["pay", "9,999"]},
            {"subject_contains": "invoice", "body_contains": ["pay"]},
        ),
        ({"subject_contains": "reminder", "body_contains": "1,250"}, {"body_contains": ["1,250"]}),
        ({"subject_contains": "invoice", "count": 2}, {"subject_contains": "invoice", "count": 1}),
        ({"body_contains": ["refund"], "count": 3}, {"body_contains": [], "count": 1}),
    ],
)
def test_recompute_keeps_the_addressees_and_what_the_oracle_wrote(expected, recomputed):
    fixed = recompute({**TO_ACCOUNTING, **expected}, ORACLE)
    assert fixed == {"id": "chk-mail_sent", **TO_ACCOUNTING, **recomputed} and holds(fixed, ORACLE)


def test_recompute_leaves_a_check_the_oracle_meets():
    fields = {**TO_ACCOUNTING, "subject_contains": "invoice"}
    assert recompute(fields, ORACLE) == {"id": "chk-mail_sent", **fields}


def test_recompute_gives_up_or_drops():
    assert recompute({**TO_ACCOUNTING, "count": 0}, ORACLE) is DROP  # a "never send this" guard the oracle breaks
    assert (
        recompute({**TO_ACCOUNTING, "to": "ceo@acme.test", "body_contains": ["x"]}, ORACLE) is None
    )  # nobody to read from
