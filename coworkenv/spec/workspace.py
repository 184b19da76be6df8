"""Typed initial state of the eight workspace services (DESIGN §4 `workspace`).

These models are the single source of truth for record shapes: a spec's workspace is validated against
them, and the runtime workspace holds exactly their JSON dump.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator

from coworkenv.timeutil import parse_instant


def _iso_instant(value: str) -> str:
    parse_instant(value)  # raises ValueError with a clear message
    return value


Instant = Annotated[str, AfterValidator(_iso_instant)]
FiniteFloat = Annotated[float, Field(allow_inf_nan=False)]
Scalar = str | int | FiniteFloat | bool | None


class Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, populate_by_name=True)


class Identity(Record):
    """Who the agent acts as: the sender of its mail, the author of its posts and comments."""

    name: str = "Me"
    email: str = "me@acme.test"


class MailMessage(Record):
    id: str
    folder: str = "inbox"
    from_: str = Field(alias="from")
    to: list[str] = []
    cc: list[str] = []
    subject: str = ""
    body: str = ""
    date: Instant


class MailState(Record):
    messages: list[MailMessage] = []


class Event(Record):
    id: str
    title: str
    start: Instant
    end: Instant
    attendees: list[str] = []
    location: str = ""


class CalendarState(Record):
    events: list[Event] = []


class Person(Record):
    id: str
    name: str
    email: str
    team: str = ""
    title: str = ""
    phone: str = ""
    timezone: str = "UTC"


class ContactsState(Record):
    people: list[Person] = []


class Sheet(Record):
    columns: list[str]
    rows: list[list[Scalar]] = []


class Doc(Record):
    id: str
    title: str
    body: str = ""


class DocsState(Record):
    docs: list[Doc] = []


class TicketComment(Record):
    author: str
    text: str
    ts: Instant


class Ticket(Record):
    id: str
    title: str
    body: str = ""
    status: str = "open"
    assignee: str | None = None
    priority: str = "normal"
    comments: list[TicketComment] = []


class TicketsState(Record):
    tickets: list[Ticket] = []


class ChatMessage(Record):
    from_: str = Field(alias="from")
    text: str
    ts: Instant


class ChatState(Record):
    channels: dict[str, list[ChatMessage]] = {}


class WorkspaceSpec(Record):
    """Every service is optional; absent means empty."""

    now: Instant = "2026-12-01T09:00:00Z"
    """The workspace clock: records the agent creates are stamped `now` plus one second per call."""
    me: Identity = Identity()
    files: dict[str, str] = {}
    mail: MailState = MailState()
    calendar: CalendarState = CalendarState()
    contacts: ContactsState = ContactsState()
    sheets: dict[str, Sheet] = {}
    docs: DocsState = DocsState()
    tickets: TicketsState = TicketsState()
    chat: ChatState = ChatState()

    @field_validator("files")
    @classmethod
    def _normal_paths(cls, files: dict[str, str]) -> dict[str, str]:
        from coworkenv.workspace.paths import is_normal_path

        for path in files:
            if not is_normal_path(path):
                raise ValueError(f"file path {path!r} must be relative and normalized (no '..', '//', leading '/')")
        return files


SERVICES = ("files", "mail", "calendar", "contacts", "sheets", "docs", "tickets", "chat")

# Service → the list-of-records collection inside it, for `record` checks and diffs.
COLLECTIONS = {"mail": "messages", "calendar": "events", "contacts": "people", "docs": "docs", "tickets": "tickets"}
