"""contacts: a read-only directory of people."""

from __future__ import annotations

from typing import TYPE_CHECKING

from coworkenv.workspace.records import Record
from coworkenv.workspace.service import Service, register_service
from coworkenv.workspace.tools import MAX_SEARCH_RESULTS, Args, Short, detached, text_matches, tool

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


class ContactsState(Record):
    people: list[Person] = []


SERVICE = register_service(Service(name="contacts", state=ContactsState, description="A read-only directory of people.", collection="people"))


class SearchArgs(Args):
    query: Short = ""


class IdArgs(Args):
    id: Short


@tool("read", SearchArgs)
def contacts_search(ws: Workspace, a: SearchArgs) -> dict:
    """Search people by name, email, team or title (all words must match)."""
    hits = [
        detached(p) for p in ws.state["contacts"]["people"]
        if text_matches(a.query, p["name"], p["email"], p["team"], p["title"])
    ]  # fmt: skip
    return {"people": hits[:MAX_SEARCH_RESULTS], "total": len(hits)}


@tool("read", IdArgs, target="id")
def contacts_get(ws: Workspace, a: IdArgs) -> dict:
    """Get one person by id."""
    return detached(ws.find(ws.state["contacts"]["people"], a.id, "contact"))
