"""`tool_called`: passing and failing evidence; its `references`, `recompute`, `strengthen` and `fix_reference` hooks
through the registry."""

from __future__ import annotations

import pytest

from coworkenv.checks import DROP
from tests.support.builders import err, ok
from tests.support.checks import (
    Row,
    assert_pass_fail,
    cases,
    episode,
    fix,
    holds,
    missing,
    only_after,
    recompute,
    registered,
    strengthen,
    with_calls,
)

ROWS: list[Row] = [
    (
        "tool_called",
        {"kind": "tool_called", "tool": "mail_send", "args": {"to": "*@acme.test"}},
        with_calls(ok(0, "mail_send", {"to": ["x@other.test", "Y@ACME.TEST"]})),
        with_calls(err(0, "mail_send", 500, {"to": "y@acme.test"}), ok(1, "mail_send", {"to": "y@other.test"})),
    ),
    (
        "tool_called-min-max",
        {"kind": "tool_called", "tool": "mail_search", "min": 2, "max": 3},
        with_calls(*(ok(i, "mail_search") for i in range(3))),
        with_calls(*(ok(i, "mail_search") for i in range(4))),
    ),
    (
        "tool_called-max-zero",
        {"kind": "tool_called", "tool": "mail_delete", "min": 0, "max": 0},
        with_calls(err(0, "mail_delete", 404)),
        with_calls(ok(0, "mail_delete")),
    ),
]

ORACLE = episode(
    calls=(
        ok(0, "mail_search", {"query": "invoice"}),
        err(1, "mail_send", 500),
        ok(2, "mail_send", {"to": "acc@acme.test"}),
    )
)
ALLOWED = ["mail_move", "mail_search"]
"""A task allowing only the tools its solution uses."""


def called(tool: str, **fields) -> dict:
    return {"kind": "tool_called", "tool": tool, **fields}


@pytest.mark.parametrize(("fields", "passing", "failing"), cases(ROWS))
def test_evaluate(fields, passing, failing):
    assert_pass_fail(fields, passing, failing)


def test_registry_entry():
    assert registered("tool_called") == {
        "hooks": {"references", "recompute", "strengthen", "fix_reference"},
        "guard": False,
        "answer": False,
        "evidence_for": set(),
    }


@pytest.mark.parametrize(
    ("fields", "found"),
    [
        (called("mail_send", args={"to": "*@acme.test", "cc": "x"}), []),
        (called("mail_nuke"), [("mail_nuke", "unknown tool", "")]),
        (called("mail_send", args={"recipient": "x"}), [("recipient", "not a parameter of mail_send", ".args")]),
        (called("mail_delete"), [("mail_delete", "tool_called names a tool the task does not allow", "")]),
    ],
)
def test_references(fields, found):
    assert missing(fields, tools=[*ALLOWED, "mail_send"]) == found


@pytest.mark.parametrize(
    ("fields", "recomputed"),
    [
        (called("mail_search", min=2, max=3), called("mail_search", min=1, max=3)),
        (called("mail_search", min=0, max=0), called("mail_search", min=0, max=1)),
        # arguments the oracle never uses go, and the bounds widen to its calls without them
        (called("mail_send", args={"to": "ceo@*"}, min=2), called("mail_send", min=1)),
        (called("mail_search", args={"query": "refund"}, min=2, max=3), called("mail_search", min=1, max=3)),
    ],
)
def test_recompute_widens_to_what_the_oracle_does(fields, recomputed):
    fixed = recompute(fields, ORACLE)
    assert fixed == {"id": "chk-tool_called", **recomputed} and holds(fixed, ORACLE)


def test_recompute_drops_a_tool_the_oracle_never_gets_through():
    assert recompute(called("mail_delete"), ORACLE) is DROP
    assert recompute(called("mail_send"), episode(calls=(err(0, "mail_send", 500),))) is DROP


def test_strengthen_asks_for_at_least_one_call():
    fields = called("mail_search", min=0)
    stronger = strengthen(fields, ORACLE)
    assert stronger == {"id": "chk-tool_called", **fields, "min": 1} and only_after(stronger, ORACLE)


def test_fix_reference_corrects_a_misspelled_tool_and_argument():
    reason, check, fixing = fix(called("mail_sned", args={"too": "x@acme.test"}))
    assert reason is None and check == {"id": "chk-tool_called", **called("mail_send", args={"to": "x@acme.test"})}
    assert fixing.notes == ["check chk-tool_called: tool 'mail_sned' → 'mail_send'"]


def test_fix_reference_allows_a_tool_the_solution_uses():
    reason, _, fixing = fix(called("mail_search"), tools=["mail_move"])
    assert reason is None and fixing.spec["tools"] == ["mail_move", "mail_search"]


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        (called("zzz"), "unknown tool 'zzz'"),
        (called("mail_send", args={"recipient": "x"}), "argument(s) ['recipient'] name no parameter of mail_send"),
        (called("mail_delete"), "mail_delete is not available to the task"),  # not in the solution either
    ],
)
def test_fix_reference_gives_a_reason_otherwise(fields, reason):
    assert fix(fields, tools=ALLOWED)[0] == reason
