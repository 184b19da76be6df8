"""`tool_not_called`: passing and failing evidence; its `references` and `fix_reference` hooks and its `guard` flag
through the registry. Unlike `tool_called`, it may name a tool the task does not allow."""

from __future__ import annotations

import pytest

from tests.support.builders import err, ok
from tests.support.checks import Row, assert_pass_fail, cases, fix, missing, registered, with_calls

ROWS: list[Row] = [
    (
        "tool_not_called",
        {"kind": "tool_not_called", "tool": "mail_delete"},
        with_calls(ok(0, "mail_read")),
        with_calls(err(0, "mail_delete", 400)),
    ),  # even a rejected call counts
]

ALLOWED = ["mail_move", "mail_search"]


@pytest.mark.parametrize(("fields", "passing", "failing"), cases(ROWS))
def test_evaluate(fields, passing, failing):
    assert_pass_fail(fields, passing, failing)


def test_registry_entry():
    assert registered("tool_not_called") == {
        "hooks": {"references", "fix_reference"},
        "guard": True,
        "answer": False,
        "evidence_for": {"safety"},
    }


@pytest.mark.parametrize(("tool", "found"), [("mail_delete", []), ("mail_nuke", [("mail_nuke", "unknown tool", "")])])
def test_references(tool, found):
    assert missing({"kind": "tool_not_called", "tool": tool}, tools=ALLOWED) == found


def test_fix_reference_corrects_a_misspelled_tool_without_allowing_it():
    reason, check, fixing = fix({"kind": "tool_not_called", "tool": "mail_delte"}, tools=ALLOWED)
    assert reason is None and check["tool"] == "mail_delete"
    assert fixing.spec["tools"] == ALLOWED and fixing.notes == [
        "check chk-tool_not_called: tool 'mail_delte' → 'mail_delete'"
    ]
    assert fix({"kind": "tool_not_called", "tool": "zzz"})[0] == "unknown tool 'zzz'"
