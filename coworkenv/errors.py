"""Errors the library raises on bad input; the CLI turns them into one-line messages and exit code 2."""

from __future__ import annotations


class CoworkEnvError(Exception):
    """Bad input from a user: a spec, a trajectory, a name, a file."""


def format_validation_error(exc: Exception, where: str = "") -> str:
    """One line naming the first offending field of a pydantic ValidationError."""
    errors = getattr(exc, "errors", None)
    if not callable(errors):
        return f"{where}: {exc}" if where else str(exc)
    items = errors(include_url=False)
    if not items:
        return f"{where}: invalid" if where else "invalid"
    first = items[0]
    loc = ".".join(str(part) for part in first.get("loc", ()))
    msg = str(first.get("msg", "invalid")).removeprefix("Value error, ")
    more = f" (and {len(items) - 1} more)" if len(items) > 1 else ""
    prefix = f"{where}: " if where else ""
    return f"{prefix}{loc + ': ' if loc else ''}{msg}{more}"
