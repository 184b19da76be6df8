"""contacts: a directory of people; their details and notes can be updated, people are not added or removed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import Field

from coworkenv.frozen import EMPTY_LIST
from coworkenv.workspace.record_types import Record, set_sparse, sparse
from coworkenv.workspace.service import Service, register_service
from coworkenv.workspace.tool_errors import ToolError
from coworkenv.workspace.tools import MAX_SEARCH_RESULTS, Args, Short, text_matcher, tool

if TYPE_CHECKING:
    from coworkenv.workspace.runtime import Workspace


class Person(Record):
    id: str
    name: str
    email: str
    team: str = ""
    title: str = ""
    phone: str = ""
    timezone: str = "UTC"
    notes: str = sparse("")


class ContactsState(Record):
    people: list[Person] = EMPTY_LIST


SERVICE = register_service(
    Service(
        name="contacts",
        writes="authoring",
        state=ContactsState,
        description="A directory of people, with notes.",
        collection="people",
    )
)


class SearchArgs(Args):
    query: Short = ""


class IdArgs(Args):
    id: Short


class UpdateArgs(Args):
    id: Short
    notes: str | None = None
    phone: str | None = Field(default=None, max_length=64)
    title: Short | None = None
    team: Short | None = None


@tool("read", SearchArgs)
def contacts_search(ws: Workspace, a: SearchArgs) -> dict:
    """Search people by name, email, team, title or notes (all words must match)."""
    matches = text_matcher(a.query)
    hits = [
        SERVICE.detached_record(p)
        for p in ws.state["contacts"]["people"]
        if matches(p["name"], p["email"], p["team"], p["title"], p.get("notes", ""))
    ]
    return {"people": hits[:MAX_SEARCH_RESULTS], "total": len(hits)}


@tool("read", IdArgs, target="id")
def contacts_get(ws: Workspace, a: IdArgs) -> dict:
    """Get one person by id."""
    return SERVICE.detached_record(ws.find(ws.state["contacts"]["people"], a.id, "contact"))


@tool("write", UpdateArgs, target="id")
def contacts_update(ws: Workspace, a: UpdateArgs) -> dict:
    """Change a person's notes, phone, title or team (give only what changes; `notes` replaces the notes)."""
    person = ws.find(ws.state["contacts"]["people"], a.id, "contact")
    changes = {k: v for k, v in (("phone", a.phone), ("title", a.title), ("team", a.team)) if v is not None}
    if not changes and a.notes is None:
        raise ToolError(400, "nothing to update")
    person.update(changes)
    if a.notes is not None:
        ws.check_text_size(a.notes, "notes")
        set_sparse(person, "notes", a.notes, "")
    return SERVICE.detached_record(person)
