"""ISO 8601 instants: compared as moments in time, stored in canonical UTC `...Z` form."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from functools import lru_cache


@lru_cache(maxsize=4096)
def parse_instant(value: str) -> datetime:
    """Parse an ISO 8601 date-time; a time without offset is taken as UTC."""
    if not isinstance(value, str) or len(value) > 64:
        raise ValueError(f"not an ISO 8601 date-time: {value!r}")
    try:
        moment = datetime.fromisoformat(value)
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return moment.astimezone(UTC)
    except (ValueError, OverflowError):  # OverflowError: an offset pushes year 1 or 9999 out of range
        raise ValueError(f"not an ISO 8601 date-time in range: {value!r}") from None


def format_instant(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# The two below run on every calendar write and every call's clock: a task has a few instants and a few dozen
# calls, so their text is cached like the parse (formatting costs more than the rest of such a tool).
@lru_cache(maxsize=4096)
def canonical_instant(value: str) -> str:
    return format_instant(parse_instant(value))


@lru_cache(maxsize=4096)
def add_seconds(value: str, seconds: int) -> str:
    try:
        return format_instant(parse_instant(value) + timedelta(seconds=seconds))
    except OverflowError:
        return format_instant(parse_instant(value))
