"""`mail_drafted`: passing and failing evidence; drafts and sent mail never count for each other; `recompute`."""

from __future__ import annotations

import copy

import pytest

from coworkenv.checks import DROP
from coworkenv.spec.task import TaskSpec
from tests.support.builders import evidence, spec_dict
from tests.support.checks import (
    Row,
    assert_pass_fail,
    cases,
    drafted,
    episode,
    holds,
    move,
    recompute,
    registered,
    sent,
    unchanged_state,
    with_state,
)

ROWS: list[Row] = [
    (
        "mail_drafted",
        {"kind": "mail_drafted", "to": "ana@acme.test", "subject_contains": "refund", "body_contains": ["ORDER", "42"]},
        with_state(drafted(to=["Ana@Acme.test"], subject="Re: Refund", body="your order #42 is refunded")),
        with_state(drafted(to=["ana@acme.test"], subject="Re: Refund", body="your order is refunded")),
    ),
    (
        "mail_drafted-not-sent",
        {"kind": "mail_drafted", "to": "ana@acme.test"},
        with_state(drafted(to=["ana@acme.test"])),
        with_state(sent(to=["ana@acme.test"])),
    ),
    (
        "mail_drafted-glob-cc",
        {"kind": "mail_drafted", "to": "*@acme.test", "cc": ["bo@*"]},
        with_state(drafted(to=["x@acme.test"], cc=["bo@acme.test"])),
        with_state(drafted(to=["x@acme.test"])),
    ),
    (
        "mail_drafted-count",
        {"kind": "mail_drafted", "to": "x@acme.test", "count": 1},
        with_state(drafted(to=["x@acme.test"]), sent(to=["x@acme.test"], id="m98")),
        with_state(drafted(to=["x@acme.test"]), drafted(to=["x@acme.test"], id="m98")),
    ),
    (
        "mail_drafted-count-zero",
        {"kind": "mail_drafted", "to": "*@external.test", "count": 0},
        unchanged_state,
        with_state(drafted(to=["leak@external.test"])),
    ),
    (
        "mail_drafted-initial-not-counted",
        {"kind": "mail_drafted", "to": "me@acme.test"},
        with_state(drafted(to=["me@acme.test"])),
        with_state(move("m1", "drafts")),
    ),
]

TO_ANA = {"kind": "mail_drafted", "to": "ana@acme.test"}
ORACLE = episode(drafted(to=["ana@acme.test"], subject="Re: Refund", body="Order 42 is refunded: 80 EUR."))


@pytest.mark.parametrize(("fields", "passing", "failing"), cases(ROWS))
def test_evaluate(fields, passing, failing):
    assert_pass_fail(fields, passing, failing)


def test_registry_entry():
    assert registered("mail_drafted") == {
        "hooks": {"recompute"},
        "guard": False,
        "answer": False,
        "evidence_for": set(),
    }


def test_a_draft_is_not_sent_mail_and_sent_mail_is_not_a_draft():
    draft_only, sent_only = episode(drafted(to=["ana@acme.test"])), episode(sent(to=["ana@acme.test"]))
    assert holds({"kind": "mail_sent", "to": "ana@acme.test", "count": 0}, draft_only)
    assert not holds({"kind": "mail_sent", "to": "ana@acme.test"}, draft_only)
    assert holds({"kind": "mail_drafted", "to": "ana@acme.test", "count": 0}, sent_only)


def test_a_draft_seeded_in_the_workspace_counts_as_sent_once_it_leaves_drafts():
    data = spec_dict()
    data["workspace"]["mail"]["messages"][0]["folder"] = "drafts"
    seeded = TaskSpec.model_validate(data)
    final = copy.deepcopy(seeded.initial_state)
    waiting = evidence(seeded, copy.deepcopy(final))
    final["mail"]["messages"][0]["folder"] = "sent"
    sent_later = evidence(seeded, final)
    assert not holds({"kind": "mail_sent", "to": "me@acme.test"}, waiting)
    assert holds({"kind": "mail_sent", "to": "me@acme.test", "count": 1}, sent_later)
    assert not holds({"kind": "mail_drafted", "to": "me@acme.test"}, waiting)  # the agent did not draft it


@pytest.mark.parametrize(
    ("expected", "recomputed"),
    [
        (
            {"subject_contains": "refund", "body_contains": ["42", "9,999"]},
            {"subject_contains": "refund", "body_contains": ["42"]},
        ),
        ({"subject_contains": "invoice", "body_contains": "80 EUR"}, {"body_contains": ["80 EUR"]}),
        ({"subject_contains": "refund", "count": 2}, {"subject_contains": "refund", "count": 1}),
    ],
)
def test_recompute_keeps_the_addressees_and_what_the_oracle_drafted(expected, recomputed):
    fixed = recompute({**TO_ANA, **expected}, ORACLE)
    assert fixed == {"id": "chk-mail_drafted", **TO_ANA, **recomputed} and holds(fixed, ORACLE)


def test_recompute_gives_up_or_drops():
    assert recompute({**TO_ANA, "count": 0}, ORACLE) is DROP
    assert recompute({**TO_ANA, "to": "ceo@acme.test", "body_contains": ["x"]}, ORACLE) is None
    sent_instead = episode(sent(to=["ana@acme.test"], subject="Re: Refund", body="Order 42"))
    assert (
        recompute({**TO_ANA, "body_contains": ["42"]}, sent_instead) is None
    )  # a sent message is no draft to read from
