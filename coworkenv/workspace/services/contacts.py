"""contacts: a read-only directory of people."""

from __future__ import annotations

from coworkenv.workspace.tools import Args, tool
from coworkenv.workspace.workspace import MAX_SEARCH_RESULTS, Workspace, text_matches


class SearchArgs(Args):
    query: str = ""


class IdArgs(Args):
    id: str


@tool("read", SearchArgs)
def contacts_search(ws: Workspace, a: SearchArgs) -> dict:
    """Search people by name, email, team or title (all words must match)."""
    hits = [
        dict(p) for p in ws.state["contacts"]["people"]
        if text_matches(a.query, p["name"], p["email"], p["team"], p["title"])
    ]  # fmt: skip
    return {"people": hits[:MAX_SEARCH_RESULTS], "total": len(hits)}


@tool("read", IdArgs)
def contacts_get(ws: Workspace, a: IdArgs) -> dict:
    """Get one person by id."""
    return dict(ws.find(ws.state["contacts"]["people"], a.id, "contact"))
