"""calendar: events with UTC instants; inputs may carry any offset and are stored canonically."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pydantic import Field

from coworkenv.frozen import EMPTY_LIST
from coworkenv.timeutil import canonical_instant, parse_instant
from coworkenv.workspace.record_types import Instant, Record, set_sparse, sparse
from coworkenv.workspace.service import Service, register_service
from coworkenv.workspace.tool_errors import ToolError
from coworkenv.workspace.tools import Args, Label, Short, addresses, tool

if TYPE_CHECKING:
    from coworkenv.workspace.runtime import Workspace

MAX_EVENTS = 500


class Event(Record):
    id: str
    title: str
    start: Instant
    end: Instant
    attendees: list[str] = EMPTY_LIST
    location: str = ""
    description: str = sparse("")
    organizer: str = sparse("")
    status: str = sparse("confirmed")
    """An open vocabulary: `confirmed`, `tentative`, `cancelled`, …"""


class CalendarState(Record):
    events: list[Event] = EMPTY_LIST


def add_event(
    d: Any,
    title: str,
    start: str,
    end: str,
    attendees: Sequence[str] = (),
    location: str = "",
    *,
    description: str = "",
    organizer: str = "",
    status: str = "confirmed",
) -> str:
    eid = d.next_id("e")
    event = {"id": eid, "title": title, "start": start, "end": end, "attendees": list(attendees), "location": location}
    for key, value, default in (
        ("description", description, ""),
        ("organizer", organizer, ""),
        ("status", status, "confirmed"),
    ):
        set_sparse(event, key, value, default)
    d.records("calendar").append(event)
    return eid


SERVICE = register_service(
    Service(
        name="calendar",
        writes="scheduling",
        state=CalendarState,
        description="Events with UTC instants.",
        collection="events",
        draft={"add_event": add_event},
    )
)


class ListArgs(Args):
    start: Short | None = None
    end: Short | None = None


class CreateArgs(Args):
    title: str = Field(min_length=1, max_length=500)
    start: Short
    end: Short
    attendees: list[str] = EMPTY_LIST
    location: Short = ""
    description: str = ""
    status: Label = "confirmed"


class UpdateArgs(Args):
    id: Short
    title: str | None = Field(default=None, min_length=1, max_length=500)
    start: Short | None = None
    end: Short | None = None
    attendees: list[str] | None = None
    location: Short | None = None
    description: str | None = None
    status: Label | None = None


class IdArgs(Args):
    id: Short


def _instant(value: str, name: str) -> str:
    try:
        return canonical_instant(value)
    except ValueError:
        raise ToolError(400, f"{name}: not an ISO 8601 date-time: {value!r}") from None


def _check_order(start: str, end: str) -> None:
    if parse_instant(end) <= parse_instant(start):
        raise ToolError(400, "end must be after start")


@tool("read", ListArgs)
def calendar_list(ws: Workspace, a: ListArgs) -> dict:
    """List events that overlap the [start, end) window (both optional, ISO 8601 UTC), ordered by start."""
    lo = parse_instant(_instant(a.start, "start")) if a.start else None
    hi = parse_instant(_instant(a.end, "end")) if a.end else None
    events = [
        e
        for e in ws.state["calendar"]["events"]
        if (hi is None or parse_instant(e["start"]) < hi) and (lo is None or parse_instant(e["end"]) > lo)
    ]
    events.sort(key=lambda e: (parse_instant(e["start"]), e["id"]))
    return {"events": [SERVICE.detached_record(e) for e in events]}


@tool("write", CreateArgs)
def calendar_create(ws: Workspace, a: CreateArgs) -> dict:
    """Create an event you organize. Times are ISO 8601 (UTC, e.g. 2026-12-09T14:00:00Z); attendees are email addresses."""
    start, end = _instant(a.start, "start"), _instant(a.end, "end")
    _check_order(start, end)
    ws.check_text_size(a.location, "location")
    ws.check_text_size(a.description, "description")
    events = ws.state["calendar"]["events"]
    if len(events) >= MAX_EVENTS:
        raise ToolError(400, "the calendar is full")
    event = {
        "id": ws.new_id(events, "e"),
        "title": a.title,
        "start": start,
        "end": end,
        "attendees": addresses(a.attendees),
        "location": a.location,
        "organizer": ws.me["email"],
    }
    set_sparse(event, "description", a.description, "")
    set_sparse(event, "status", a.status, "confirmed")
    events.append(event)
    return SERVICE.detached_record(event)


@tool("write", UpdateArgs, target="id")
def calendar_update(ws: Workspace, a: UpdateArgs) -> dict:
    """Change an event's title, start, end, attendees, location, description or status (e.g. `tentative`); give only what changes."""
    event = ws.find(ws.state["calendar"]["events"], a.id, "event")
    changes = {
        "title": a.title,
        "start": _instant(a.start, "start") if a.start is not None else None,
        "end": _instant(a.end, "end") if a.end is not None else None,
        "attendees": addresses(a.attendees) if a.attendees is not None else None,
        "location": a.location,
    }
    changes = {k: v for k, v in changes.items() if v is not None}
    sparse_changes = {k: v for k, v in (("description", a.description), ("status", a.status)) if v is not None}
    ws.check_text_size(changes.get("location", ""), "location")
    ws.check_text_size(sparse_changes.get("description", ""), "description")
    if not changes and not sparse_changes:
        raise ToolError(400, "nothing to update")
    _check_order(changes.get("start", event["start"]), changes.get("end", event["end"]))
    event.update(changes)
    for key, value in sparse_changes.items():
        set_sparse(event, key, value, SERVICE.record_defaults[key])
    return SERVICE.detached_record(event)


@tool("destructive", IdArgs, target="id")
def calendar_delete(ws: Workspace, a: IdArgs) -> dict:
    """Delete (cancel) an event."""
    ws.remove(ws.state["calendar"]["events"], a.id, "event")
    return {"id": a.id, "deleted": True}
