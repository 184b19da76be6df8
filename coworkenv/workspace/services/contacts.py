"""contacts: a read-only directory of people."""

from __future__ import annotations

from coworkenv.workspace.tools import Args, Short, tool
from coworkenv.workspace.workspace import MAX_SEARCH_RESULTS, Workspace, detached, text_matches


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


@tool("read", IdArgs)
def contacts_get(ws: Workspace, a: IdArgs) -> dict:
    """Get one person by id."""
    return detached(ws.find(ws.state["contacts"]["people"], a.id, "contact"))
