"""Argument matching (`checks/matching.py`), shared by prohibited rules, `tool_called`, `mail_sent` and `record`."""

from __future__ import annotations

import pytest

from coworkenv.checks.matching import args_match, example_value, value_matches
from coworkenv.checks.text import glob_literal


@pytest.mark.parametrize(
    ("pattern", "actual", "expected"),
    [
        ("*@external.test", "bob@external.test", True),
        ("*@external.test", "BOB@EXTERNAL.TEST", True),
        ("*@EXTERNAL.test", "bob@external.test", True),
        ("*@external.test", "bob@external.test.evil", False),
        ("*@external.test", "bob@internal.test", False),
        ("b?b@x.test", "bob@x.test", True),
        ("[ab]*", "Apple", True),
        ("[!ab]*", "apple", False),
        ("*@external.test", ["me@acme.test", "x@external.test"], True),  # any element
        ("*@external.test", ["me@acme.test"], False),
        ("*@external.test", [], False),
        ("exact", "exact", True),
        ("exact", "exactly", False),
        ("1", 1, False),  # a string pattern does not match a number
        (4000, 4000, True),
        (4000, 4000.0, True),
        (4000, 4001, False),
        (4000, "4000", False),
        (True, True, True),
        (True, 1, False),  # bools are not ints
        (1, True, False),
        (0, False, False),
        (False, False, True),
        (None, None, True),
        (None, "x", False),
        (["a", "b"], ["a", "b"], True),  # a list pattern compares whole
        (["a"], ["a", "b"], False),
        ({"k": "v*"}, {"k": "value", "other": 1}, True),  # dicts: subset
        ({"k": "v*"}, {"other": 1}, False),
        (1, [0, 1, 2], True),
    ],
)
def test_value_matches(pattern, actual, expected):
    assert value_matches(pattern, actual) is expected


def test_args_match():
    assert args_match(None, None) is True
    assert args_match({}, {"a": 1}) is True
    assert args_match(None, {"a": 1}) is True
    assert args_match({"to": "*@x.test"}, None) is False  # arguments that were not a JSON object
    assert args_match({"to": "*@x.test"}, {}) is False  # a missing argument does not match
    assert (
        args_match({"to": "*@x.test", "subject": "*invoice*"}, {"to": ["a@x.test"], "subject": "Fwd: INVOICE 7"})
        is True
    )
    assert args_match({"to": "*@x.test", "subject": "*invoice*"}, {"to": ["a@x.test"], "subject": "hello"}) is False


@pytest.mark.parametrize(
    "pattern", ["*@external.test", "a?c", "[ab]x", "[!ab]x", "report-*.csv", "plain", 3, None, True]
)
def test_example_value_matches_its_pattern(pattern):
    assert value_matches(pattern, example_value(pattern))


@pytest.mark.parametrize(
    ("value", "other"), [("Printer *jam*", "Printer a jam!"), ("what?", "whats"), ("[ab]c", "ac"), ("x[!a]", "xb")]
)
def test_a_glob_literal_matches_only_its_value(value, other):
    assert value_matches(value, other)  # what the value would match read as a glob
    assert value_matches(glob_literal(value), value) and not value_matches(glob_literal(value), other)
    assert glob_literal(3) == 3


VALUES = [
    None,
    True,
    False,
    0,
    1,
    2.5,
    -3,
    "",
    " x ",
    "X",
    "x",
    "inv-1",
    "INV-1",
    "a*",
    ["x", "y"],
    [],
    {"k": "x"},
    {"k": 1},
]
PATTERNS = [None, True, 0, 1, 2.5, "x", "X", "inv-*", "*", "a[bc]", ["x"], {"k": "x"}]


@pytest.mark.parametrize("pattern", PATTERNS, ids=repr)
def test_compiled_matchers_agree_with_args_match_for_one_and_two_arguments(pattern):
    """`args_matcher` compiles a rule's or a match's arguments (a one-argument one without a generator): every
    compiled form gives `args_match`'s answer."""
    from coworkenv.checks.matching import args_matcher

    for expected in ({"a": pattern}, {"a": pattern, "b": "x"}):
        test = args_matcher(expected)
        for value in VALUES:
            for actual in (None, {}, {"a": value}, {"a": value, "b": "X"}, {"b": value}):
                assert test(actual) is args_match(expected, actual), (expected, actual)


@pytest.mark.parametrize("expected", [None, True, False, 0, 7, 2.5, "", "x", " X ", "7", "true", "inv-1"], ids=repr)
def test_a_compiled_cell_test_agrees_with_cell_equals(expected):
    from coworkenv.checks.cells import cell_equals, cell_test

    test = cell_test(expected)
    for actual in [
        None,
        "",
        "  ",
        True,
        False,
        0,
        7,
        7.0,
        2.5,
        "7",
        " 7 ",
        "x",
        "X ",
        "true",
        "TRUE",
        "inv-1",
        ["x"],
        {"a": 1},
    ]:
        assert test(actual) is cell_equals(actual, expected), (actual, expected)
