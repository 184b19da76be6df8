"""The one place a spec string becomes a regular expression: compiled with RE2 (`google-re2`), whose matching time is
linear in the text, so no pattern a spec carries can make a check run away (`^(a+)+$` on `'a'*40+'!'` is as quick as
any other). RE2 has no backreferences and no lookarounds: a pattern that needs them is refused up front, by the
schema (error type `regex_unsupported`) and by the battery's `references` check.

Differences from Python's `re` a spec author may meet: `\\Z` is written `\\z`; `$` matches only at the very end
unless `(?m)` is given.
"""

from __future__ import annotations

from functools import lru_cache

import re2

from coworkenv.caps import CAPS

UNSUPPORTED = "regex_unsupported"
"""The error type (schema) and the problem prefix (`references`) of a pattern RE2 cannot compile."""


def _options(case_sensitive: bool) -> re2.Options:
    options = re2.Options()
    options.case_sensitive = case_sensitive
    options.log_errors = False  # a refused pattern is a verdict, not a line on the worker's stderr
    options.max_mem = CAPS.regex_memory_bytes
    return options


@lru_cache(maxsize=1024)
def _compiled(pattern: str, case_sensitive: bool) -> re2._Regexp:
    return re2.compile(pattern, _options(case_sensitive))


def regex_problem(pattern: str) -> str | None:
    """Why RE2 refuses `pattern` (None when it compiles): too long, a lone surrogate, or a construct RE2 lacks."""
    if len(pattern) > CAPS.regex_chars:
        return f"longer than {CAPS.regex_chars} characters"
    try:
        _compiled(pattern, True)
    except UnicodeEncodeError:
        return "holds a lone surrogate, which is not text"
    except re2.error as exc:
        reason = exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        return f"{reason} (RE2 has no backreferences or lookarounds)"
    return None


def regex_find(pattern: str, text: str, *, case_sensitive: bool) -> str | None:
    """The first match of `pattern` (one `regex_problem` accepts) in `text`, or None; lone surrogates in the text
    read as `?`."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "replace").decode("utf-8")
    match = _compiled(pattern, case_sensitive).search(text)
    return None if match is None else match.group()


def regex_search(pattern: str, text: str, *, case_sensitive: bool) -> bool:
    """Whether `pattern` (one `regex_problem` accepts) occurs in `text`."""
    return regex_find(pattern, text, case_sensitive=case_sensitive) is not None
