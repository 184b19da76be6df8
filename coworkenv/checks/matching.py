"""Argument matching shared by prohibited rules, `tool_called` and `record` checks (docs/design/contracts.md, "Matching")."""

from __future__ import annotations

import re
from collections.abc import Callable
from fnmatch import translate
from functools import lru_cache, partial
from typing import Any

from coworkenv.memo import by_identity


@lru_cache(maxsize=4096)
def _glob(pattern: str) -> tuple[str, re.Pattern[str] | None]:
    """The lowercased pattern, and its compiled regex unless it is a literal (no `*`, `?` or `[`): then a string
    matches it when equal, which is what `fnmatchcase` would find, without a regex."""
    low = pattern.lower()
    return low, re.compile(translate(low)) if "*" in low or "?" in low or "[" in low else None


def value_matches(pattern: Any, actual: Any) -> bool:
    """Strings: case-insensitive shell glob. Numbers: equal. Lists: any element matches. Dicts: subset."""
    if isinstance(actual, list) and not isinstance(pattern, list):
        return any(value_matches(pattern, item) for item in actual)
    if isinstance(pattern, str):
        if not isinstance(actual, str):
            return False
        literal, regex = _glob(pattern)
        return actual.lower() == literal if regex is None else regex.match(actual.lower()) is not None
    if isinstance(pattern, bool) or isinstance(actual, bool):
        return type(pattern) is type(actual) and pattern == actual
    if isinstance(pattern, int | float):
        return isinstance(actual, int | float) and pattern == actual
    if isinstance(pattern, dict):
        return isinstance(actual, dict) and args_match(pattern, actual)
    return pattern == actual


def args_match(expected: dict[str, Any] | None, actual: dict[str, Any] | None) -> bool:
    """A rule without args matches every call; otherwise every rule argument must be present and match."""
    if not expected:
        return True
    if actual is None:
        return False
    return all(key in actual and value_matches(value, actual[key]) for key, value in expected.items())


def value_test(pattern: Any) -> Callable[[Any], bool]:
    """`value_matches(pattern, ·)` with the pattern's own work (lowercasing, compiling a glob) done once."""
    if not isinstance(pattern, str):
        return partial(value_matches, pattern)
    literal, regex = _glob(pattern)
    match = regex.match if regex is not None else None

    def test(actual: Any) -> bool:
        if isinstance(actual, str):
            return actual.lower() == literal if match is None else match(actual.lower()) is not None
        return isinstance(actual, list) and any(test(item) for item in actual)

    return test


def _args_test(expected: dict[str, Any] | None) -> Callable[[dict[str, Any] | None], bool]:
    if not expected:
        return lambda actual: True
    tests = tuple((key, value_test(value)) for key, value in expected.items())
    if len(tests) == 1:  # most rules and matches name one argument: no generator per record or call
        ((only, match),) = tests

        def test_one(actual: dict[str, Any] | None) -> bool:
            return actual is not None and only in actual and match(actual[only])

        return test_one

    def test(actual: dict[str, Any] | None) -> bool:
        if actual is None:
            return False
        return all(key in actual and match(actual[key]) for key, match in tests)

    return test


@by_identity(4096)
def args_matcher(expected: dict[str, Any] | None) -> Callable[[dict[str, Any] | None], bool]:
    """`args_match(expected, ·)` compiled once per `expected` object (a check's `match` or `args`, a rule's `args`:
    data of a frozen spec, matched against every record or call of every episode)."""
    return _args_test(expected)


def example_value(pattern: Any) -> Any:
    """A concrete value a glob pattern matches (`*@external.test` → `x@external.test`)."""
    if not isinstance(pattern, str):
        return pattern
    out, i = [], 0
    while i < len(pattern):
        ch = pattern[i]
        if ch in "*?":
            out.append("x")
        elif ch == "[" and "]" in pattern[i + 2 :]:
            end = pattern.index("]", i + 2)
            members = pattern[i + 1 : end]
            if members[0] in "!^":
                # No candidate left outside the class: a member, so the call fails to match and the caller says so.
                out.append(next((c for c in "xyz0_-" if c not in members[1:]), members[1:2]))
            else:
                out.append(members[0])
            i = end
        else:
            out.append(ch)
        i += 1
    return "".join(out)
