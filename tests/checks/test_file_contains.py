"""`file_contains`: passing and failing evidence; its `references`, `recompute` and `strengthen` hooks through the
registry."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from coworkenv.caps import CAPS
from coworkenv.checks import DROP
from coworkenv.checks.kinds.file_contains import FileContains
from coworkenv.checks.regex import regex_search
from tests.support.checks import (
    Row,
    as_data,
    assert_pass_fail,
    cases,
    del_file,
    episode,
    holds,
    missing,
    only_after,
    recompute,
    references_of,
    registered,
    set_file,
    strengthen,
    unchanged_state,
    with_state,
)

ROWS: list[Row] = [
    (
        "file_contains-text",
        {"kind": "file_contains", "path": "notes/todo.txt", "text": "MILK"},
        unchanged_state,
        with_state(set_file("notes/todo.txt", "buy bread")),
    ),
    (
        "file_contains-missing-file",
        {"kind": "file_contains", "path": "notes/todo.txt", "text": "milk"},
        unchanged_state,
        with_state(del_file("notes/todo.txt")),
    ),
    (
        "file_contains-case-sensitive",
        {"kind": "file_contains", "path": "notes/todo.txt", "text": "Milk", "case_sensitive": True},
        with_state(set_file("notes/todo.txt", "buy Milk")),
        unchanged_state,
    ),
    (
        "file_contains-regex",
        {"kind": "file_contains", "path": "reports/q3.csv", "regex": r"(?m)^north,1\d\d$"},
        unchanged_state,
        with_state(set_file("reports/q3.csv", "region,revenue\nnorth,99\n")),
    ),
    (
        "file_contains-regex-ci",
        {"kind": "file_contains", "path": "reports/q3.csv", "regex": "NORTH"},
        unchanged_state,
        with_state(set_file("reports/q3.csv", "x")),
    ),
    (
        "file_contains-regex-ci-inline",
        {"kind": "file_contains", "path": "reports/q3.csv", "regex": "(?i)NORTH", "case_sensitive": True},
        unchanged_state,
        with_state(set_file("reports/q3.csv", "x")),
    ),
    (
        "file_contains-regex-case-sensitive",
        {"kind": "file_contains", "path": "reports/q3.csv", "regex": "north", "case_sensitive": True},
        unchanged_state,
        with_state(set_file("reports/q3.csv", "NORTH")),
    ),
    (
        "file_contains-absent",
        {"kind": "file_contains", "path": "notes/todo.txt", "text": "INC-4390", "absent": True},
        unchanged_state,
        with_state(set_file("notes/todo.txt", "fixed: inc-4390")),
    ),
    (
        "file_contains-absent-needs-the-file",
        {"kind": "file_contains", "path": "notes/todo.txt", "regex": "x", "absent": True},
        unchanged_state,
        with_state(del_file("notes/todo.txt")),
    ),
    (
        "file_contains-catastrophic-regex",
        {"kind": "file_contains", "path": "notes/todo.txt", "regex": "^(a+)+$"},
        with_state(set_file("notes/todo.txt", "a" * 40)),
        with_state(set_file("notes/todo.txt", "a" * 40 + "!")),
    ),
]

TODO = {"kind": "file_contains", "path": "notes/todo.txt"}


@pytest.mark.parametrize(("fields", "passing", "failing"), cases(ROWS))
def test_evaluate(fields, passing, failing):
    assert_pass_fail(fields, passing, failing)


def test_registry_entry():
    assert registered("file_contains") == {
        "hooks": {"references", "recompute", "strengthen"},
        "guard": False,
        "answer": False,
        "evidence_for": {"data_analysis"},
    }


def test_references():
    assert missing({**TODO, "text": "milk"}) == []
    assert missing({**TODO, "path": "out/r.md", "text": "x"}, set_file("out/r.md", "x")) == []
    assert [ref for ref, _, _ in missing({**TODO, "path": "out/r.md", "text": "x"})] == ["out/r.md"]


@pytest.mark.parametrize(
    "fields",
    [{**TODO, "text": "bread"}, {**TODO, "regex": "^bread$", "case_sensitive": True}],
    ids=["text", "regex-becomes-text"],
)
def test_recompute_takes_the_first_line_the_oracle_added(fields):
    ev = episode(set_file("notes/todo.txt", "buy milk\nBuy Eggs\ncall Ana\n"))
    fixed = recompute(fields, ev)
    assert fixed["text"] == "Buy Eggs" and "regex" not in fixed and holds(fixed, ev)
    assert fixed.get("case_sensitive") == fields.get("case_sensitive")


def test_recompute_gives_up_or_drops():
    assert recompute({**TODO, "text": "bread"}, episode(del_file("notes/todo.txt"))) is DROP
    assert recompute({**TODO, "text": "bread"}, episode()) is None  # the oracle added nothing to read from


def test_strengthen_replaces_a_check_that_holds_untouched():
    fields = {**TODO, "regex": "MILK", "case_sensitive": False}
    ev = episode(set_file("notes/todo.txt", "buy milk\nbuy eggs\n"))
    stronger = strengthen(fields, ev)
    assert stronger == {"id": "chk-file_contains", **TODO, "text": "buy eggs"}
    assert only_after(stronger, ev)
    assert strengthen(fields, episode()) is None


def test_an_absent_check_is_neither_recomputed_nor_strengthened():
    fields = {**TODO, "text": "INC-4390", "absent": True}
    ev = episode(set_file("notes/todo.txt", "buy milk\n"))
    assert recompute(fields, ev) is None
    assert strengthen(fields, ev) is None


@pytest.mark.parametrize(
    ("regex", "problem"),
    [
        (r"(a)\1", "invalid escape sequence"),
        ("(?=a)", "invalid perl operator"),
        ("(?<!x)a", "invalid perl operator"),
        ("(", "missing )"),
        ("\ud800", "lone surrogate"),
        ("a" * (CAPS.regex_chars + 1), f"longer than {CAPS.regex_chars}"),
    ],
    ids=["backreference", "lookahead", "lookbehind", "unbalanced", "surrogate", "too-long"],
)
def test_a_regex_re2_cannot_run_is_refused_by_the_schema_and_by_references(regex, problem):
    with pytest.raises(ValidationError) as info:
        FileContains(**as_data({**TODO, "regex": regex}))
    [error] = info.value.errors()
    assert error["type"] == "regex_unsupported" and problem in error["msg"]
    built = FileContains.model_construct(**as_data({**TODO, "regex": regex}))  # as a spec built without validation
    refs = references_of(built)
    assert [(ref, at) for ref, _, at in refs] == [(regex, ".regex")]
    assert refs[0][1].startswith("regex_unsupported: ") and problem in refs[0][1]


def test_a_lone_surrogate_in_the_text_reads_as_a_question_mark():
    assert regex_search("milk", "\ud800 MILK", case_sensitive=False)
    assert not regex_search("milk", "\ud800", case_sensitive=False)
    assert regex_search(r"^\?$", "\ud800", case_sensitive=True)
