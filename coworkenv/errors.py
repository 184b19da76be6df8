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


def field_label(model: type, name: str) -> str:
    """A setting as the trigger form shows it: its title and its key, `Lowest difficulty (difficulty_min)`."""
    field = getattr(model, "model_fields", {}).get(name)
    title = getattr(field, "title", None)
    return f"{title} ({name})" if title else name


def format_settings_error(model: type, exc: Exception, where: str = "") -> str:
    """One line for a job config's first error, in the words of its trigger form: the field by title and key, never a
    CLI flag (`Tasks (n): Input should be …`); an unknown key is named with the closest real one."""
    import difflib

    errors = getattr(exc, "errors", None)
    if not callable(errors) or not errors(include_url=False):
        return format_validation_error(exc, where)
    items = errors(include_url=False)
    first = items[0]
    loc = [str(part) for part in first.get("loc", ())]
    fields = list(getattr(model, "model_fields", {}))
    if first.get("type") == "extra_forbidden" and loc:
        close = difflib.get_close_matches(loc[0], fields, n=1)
        hint = f" (did you mean {field_label(model, close[0])}?)" if close else ""
        text = f"{loc[0]!r} is not a setting of this run{hint}"
    else:
        msg = str(first.get("msg", "invalid")).removeprefix("Value error, ").removeprefix("Assertion failed, ")
        inner = "".join(f" item {int(part) + 1}" if part.isdigit() else f" {part}" for part in loc[1:])
        field = f"{field_label(model, loc[0])}{inner}: " if loc else ""
        text = field + msg
    more = f" (and {len(items) - 1} more)" if len(items) > 1 else ""
    text = " ".join(text.split())  # one line, whatever a validator's message held
    return f"{where}: {text}{more}" if where else text + more


def first_line(exc: BaseException) -> str:
    """An exception's message as one line of an error: its first non-empty line, else the exception's type."""
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__
