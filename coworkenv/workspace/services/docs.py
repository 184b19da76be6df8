"""docs: titled text documents."""

from __future__ import annotations

from pydantic import Field

from coworkenv.workspace.tools import Args, Short, tool
from coworkenv.workspace.workspace import MAX_SEARCH_RESULTS, Workspace, detached, text_matches

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
    hits = [d for d in ws.state["docs"]["docs"] if text_matches(a.query, d["title"], d["body"])]
    return {
        "docs": [{"id": d["id"], "title": d["title"], "snippet": d["body"][:SNIPPET_CHARS]} for d in hits[:MAX_SEARCH_RESULTS]],
        "total": len(hits),
    }


@tool("read", IdArgs)
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


@tool("write", UpdateArgs)
def docs_update(ws: Workspace, a: UpdateArgs) -> dict:
    """Replace a document's body."""
    ws.check_text_size(a.body, "body")
    doc = ws.find(ws.state["docs"]["docs"], a.id, "document")
    doc["body"] = a.body
    return {"id": a.id, "updated": True}
