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
    assert args_match({"to": "*@x.test", "subject": "*invoice*"}, {"to": ["a@x.test"], "subject": "Fwd: INVOICE 7"}) is True
    assert args_match({"to": "*@x.test", "subject": "*invoice*"}, {"to": ["a@x.test"], "subject": "hello"}) is False


@pytest.mark.parametrize("pattern", ["*@external.test", "a?c", "[ab]x", "[!ab]x", "report-*.csv", "plain", 3, None, True])
def test_example_value_matches_its_pattern(pattern):
    assert value_matches(pattern, example_value(pattern))


@pytest.mark.parametrize(("value", "other"), [("Printer *jam*", "Printer a jam!"), ("what?", "whats"), ("[ab]c", "ac"), ("x[!a]", "xb")])
def test_a_glob_literal_matches_only_its_value(value, other):
    assert value_matches(value, other)  # what the value would match read as a glob
    assert value_matches(glob_literal(value), value) and not value_matches(glob_literal(value), other)
    assert glob_literal(3) == 3
