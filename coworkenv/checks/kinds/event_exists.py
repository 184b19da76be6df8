"""`event_exists`: an event with this title part, start, end (compared as instants) and attendees."""

from __future__ import annotations

from typing import Any, Literal

from coworkenv.checks.base import DROP, CheckBase, CheckKind, Evidence, Outcome, register_kind
from coworkenv.frozen import EMPTY_LIST
from coworkenv.timeutil import parse_instant


class EventExists(CheckBase):
    kind: Literal["event_exists"]
    title_contains: str | None = None
    start: str | None = None
    end: str | None = None
    attendees_include: list[str] = EMPTY_LIST


def _same_instant(a: str, b: str) -> bool:
    try:
        return parse_instant(a) == parse_instant(b)
    except ValueError:
        return False


def evaluate(check: EventExists, ev: Evidence) -> Outcome:
    wanted = [a.lower() for a in check.attendees_include]
    title = check.title_contains.lower() if check.title_contains is not None else None
    for event in ev.final_state["calendar"]["events"]:
        attendees = {a.lower() for a in event["attendees"]}
        if (
            (title is None or title in event["title"].lower())
            and (check.start is None or _same_instant(event["start"], check.start))
            and (check.end is None or _same_instant(event["end"], check.end))
            and all(a in attendees for a in wanted)
        ):
            return True, f"event {event['id']} matches"
    return False, "no event matches"


def recompute(check: dict[str, Any], ev: Evidence, spec: Any) -> Any:
    """The event the oracle created or changed (the one whose title matches, or the only one): its title, its times
    where the check asks for them, and the attendees it really has."""
    initial = {e["id"]: e for e in ev.initial_state["calendar"]["events"]}
    touched = [e for e in ev.final_state["calendar"]["events"] if initial.get(e["id"]) != e]
    if not touched:
        return DROP
    title = (check.get("title_contains") or "").lower()
    titled = [e for e in touched if title and title in e["title"].lower()]
    if titled:
        event = titled[0]
    elif len(touched) == 1:
        event = touched[0]
    else:
        return None
    new = dict(check)
    if title and title not in event["title"].lower():
        new["title_contains"] = event["title"]
    if check.get("start") is not None:
        new["start"] = event["start"]
    if check.get("end") is not None:
        new["end"] = event["end"]
    attendees = {a.lower() for a in event["attendees"]}
    if check.get("attendees_include"):
        new["attendees_include"] = [a for a in check["attendees_include"] if a.lower() in attendees]
    return new


def strengthen(check: dict[str, Any], oracle: Evidence) -> dict[str, Any] | None:
    """Pinned to the start and end of the event the oracle made."""
    fixed = recompute({**check, "start": "", "end": ""}, oracle, None)
    return fixed if isinstance(fixed, dict) else None


KIND = register_kind(
    CheckKind(name="event_exists", model=EventExists, evaluate=evaluate, recompute=recompute, strengthen=strengthen)
)
