"""docs: titled text documents."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import Field

from coworkenv.frozen import EMPTY_LIST
from coworkenv.workspace.record_types import Record, detached
from coworkenv.workspace.service import Service, register_service
from coworkenv.workspace.tools import MAX_SEARCH_RESULTS, Args, Short, text_matcher, tool

if TYPE_CHECKING:
    from coworkenv.workspace.runtime import Workspace


class Doc(Record):
    id: str
    title: str
    body: str = ""


class DocsState(Record):
    docs: list[Doc] = EMPTY_LIST


def add_doc(d: Any, title: str, body: str) -> str:
    did = d.next_id("d")
    d.records("docs").append({"id": did, "title": title, "body": body})
    return did


SERVICE = register_service(
    Service(
        name="docs",
        writes="authoring",
        state=DocsState,
        description="Titled text documents.",
        collection="docs",
        draft={"add_doc": add_doc},
    )
)

SNIPPET_CHARS = 160


class SearchArgs(Args):
    query: Short = ""


class IdArgs(Args):
    id: Short


class CreateArgs(Args):
    title: str = Field(min_length=1, max_length=500)
    body: str


class UpdateArgs(Args):
    id: Short
    body: str


@tool("read", SearchArgs)
def docs_search(ws: Workspace, a: SearchArgs) -> dict:
    """Search documents by words in title and body (all words must match)."""
    matches = text_matcher(a.query)
    hits = [d for d in ws.state["docs"]["docs"] if matches(d["title"], d["body"])]
    return {
        "docs": [
            {"id": d["id"], "title": d["title"], "snippet": d["body"][:SNIPPET_CHARS]}
            for d in hits[:MAX_SEARCH_RESULTS]
        ],
        "total": len(hits),
    }


@tool("read", IdArgs, target="id")
def docs_read(ws: Workspace, a: IdArgs) -> dict:
    """Read one document in full."""
    return detached(ws.find(ws.state["docs"]["docs"], a.id, "document"))


@tool("write", CreateArgs)
def docs_create(ws: Workspace, a: CreateArgs) -> dict:
    """Create a document."""
    ws.check_text_size(a.body, "body")
    docs = ws.state["docs"]["docs"]
    doc = {"id": ws.new_id(docs, "d"), "title": a.title, "body": a.body}
    docs.append(doc)
    return {"id": doc["id"], "title": doc["title"]}


@tool("write", UpdateArgs, target="id")
def docs_update(ws: Workspace, a: UpdateArgs) -> dict:
    """Replace a document's body."""
    ws.check_text_size(a.body, "body")
    doc = ws.find(ws.state["docs"]["docs"], a.id, "document")
    doc["body"] = a.body
    return {"id": a.id, "updated": True}
