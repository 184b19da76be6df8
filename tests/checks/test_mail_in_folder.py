"""`mail_in_folder`: passing and failing evidence; its `references`, `recompute` and `fix_reference` hooks through
the registry."""

from __future__ import annotations

import pytest

from coworkenv.checks import DROP
from tests.support.checks import (
    Row,
    assert_pass_fail,
    cases,
    episode,
    fix,
    holds,
    missing,
    move,
    recompute,
    registered,
    sent,
    unchanged_state,
    with_state,
)

ROWS: list[Row] = [
    (
        "mail_in_folder",
        {"kind": "mail_in_folder", "ids": ["m1", "m2"], "folder": "archive"},
        with_state(move("m1", "archive"), move("m2", "archive")),
        with_state(move("m1", "archive")),
    ),
    (
        "mail_in_folder-deleted",
        {"kind": "mail_in_folder", "ids": ["m1"], "folder": "inbox"},
        unchanged_state,
        with_state(lambda s: s["mail"]["messages"].pop(0)),
    ),
]

NO_ID = "no such mail id, initially or after the oracle"


def archived(*ids: str) -> dict:
    return {"kind": "mail_in_folder", "ids": list(ids), "folder": "archive"}


def delete(mid: str):
    return lambda s: s["mail"]["messages"].remove(next(m for m in s["mail"]["messages"] if m["id"] == mid))


@pytest.mark.parametrize(("fields", "passing", "failing"), cases(ROWS))
def test_evaluate(fields, passing, failing):
    assert_pass_fail(fields, passing, failing)


def test_registry_entry():
    assert registered("mail_in_folder") == {
        "hooks": {"references", "recompute", "fix_reference"},
        "guard": False,
        "answer": False,
        "evidence_for": set(),
    }


def test_references_report_each_unknown_id():
    assert missing(archived("m1", "m2")) == []
    assert missing(archived("m1", "m99"), sent(to=["x@acme.test"])) == []  # the oracle's own message
    assert missing(archived("m1", "m8", "m9")) == [("m8", NO_ID, ""), ("m9", NO_ID, "")]


@pytest.mark.parametrize(
    ("oracle", "ids", "recomputed"),
    [
        (
            (move("m1", "Archive/2026"), move("m2", "Archive/2026")),
            ["m1", "m2"],
            {"ids": ["m1", "m2"], "folder": "Archive/2026"},
        ),
        ((move("m1", "done"), delete("m2")), ["m1", "m2"], {"ids": ["m1"], "folder": "done"}),  # a deleted id goes
    ],
)
def test_recompute_takes_the_one_folder_the_oracle_used(oracle, ids, recomputed):
    ev = episode(*oracle)
    fixed = recompute(archived(*ids), ev)
    assert fixed == {"id": "chk-mail_in_folder", "kind": "mail_in_folder", **recomputed} and holds(fixed, ev)


def test_recompute_gives_up_or_drops():
    assert recompute(archived("m1"), episode(delete("m1"))) is DROP
    assert recompute(archived("m1", "m2"), episode(move("m1", "a"), move("m2", "b"))) is None  # two folders: which one?


def test_fix_reference_removes_an_unknown_id():
    reason, check, fixing = fix(archived("m1", "m9"))
    assert reason is None and check["ids"] == ["m1"]
    assert fixing.notes == ["check chk-mail_in_folder: removed unknown mail id 'm9'"]


def test_fix_reference_gives_a_reason_otherwise():
    assert fix(archived("m9"))[0] == "none of its mail ids exists"
    other = {"where": "checks[0]", "ref": "m1", "problem": "something else"}
    assert fix(archived("m1"), entry=other)[0] == "something else"
