"""tickets: a helpdesk queue with statuses, assignees, priorities, tags, categories, customers and comments."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from coworkenv.frozen import EMPTY_LIST
from coworkenv.workspace.record_types import Instant, Record, set_sparse, sparse
from coworkenv.workspace.service import Service, register_service
from coworkenv.workspace.tool_errors import ToolError
from coworkenv.workspace.tools import MAX_SEARCH_RESULTS, Args, Label, Short, edit_labels, text_matcher, tool

if TYPE_CHECKING:
    from coworkenv.workspace.runtime import Workspace

Status = Literal["open", "pending", "in_progress", "resolved", "closed"]


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
    """An open vocabulary (`low`, `normal`, `high`, `urgent`, `P1`, …)."""
    comments: list[TicketComment] = EMPTY_LIST
    tags: list[str] = sparse([])
    category: str = sparse("")
    customer: str = sparse("")


class TicketsState(Record):
    tickets: list[Ticket] = EMPTY_LIST


def add_ticket(
    d: Any,
    title: str,
    body: str,
    *,
    status: str = "open",
    assignee: str | None = None,
    priority: str = "normal",
    tags: Sequence[str] = (),
    category: str = "",
    customer: str = "",
) -> str:
    tid = d.next_id("t")
    ticket = {
        "id": tid,
        "title": title,
        "body": body,
        "status": status,
        "assignee": assignee,
        "priority": priority,
        "comments": [],
    }
    for key, value, default in (("tags", list(tags), []), ("category", category, ""), ("customer", customer, "")):
        set_sparse(ticket, key, value, default)
    d.records("tickets").append(ticket)
    return tid


SERVICE = register_service(
    Service(
        name="tickets",
        writes="authoring",
        state=TicketsState,
        description="A helpdesk queue with statuses, assignees, priorities and comments.",
        collection="tickets",
        draft={"add_ticket": add_ticket},
    )
)


class SearchArgs(Args):
    query: Short = ""
    status: Status | None = None
    tag: Label | None = None


class IdArgs(Args):
    id: Short


class UpdateArgs(Args):
    id: Short
    status: Status | None = None
    assignee: str | None = Field(default=None, max_length=254)
    comment: str | None = None
    priority: Label | None = None
    category: Label | None = None
    customer: Short | None = None


class TagArgs(Args):
    id: Short
    add: list[Label] = Field(default=EMPTY_LIST, max_length=100)
    remove: list[Label] = Field(default=EMPTY_LIST, max_length=100)


class CreateArgs(Args):
    title: str = Field(min_length=1, max_length=500)
    body: str
    assignee: str | None = Field(default=None, max_length=254)


def _summary(t: dict) -> dict:
    return {
        "id": t["id"],
        "title": t["title"],
        "status": t["status"],
        "assignee": t["assignee"],
        "priority": t["priority"],
        "tags": list(t.get("tags", [])),
        "category": t.get("category", ""),
        "customer": t.get("customer", ""),
    }


@tool("read", SearchArgs)
def tickets_search(ws: Workspace, a: SearchArgs) -> dict:
    """Search tickets by words in title, body, customer and category (all words must match), optionally by status and tag."""
    matches = text_matcher(a.query)
    hits = [
        t
        for t in ws.state["tickets"]["tickets"]
        if (a.status is None or t["status"] == a.status)
        and (a.tag is None or a.tag.lower() in {x.lower() for x in t.get("tags", [])})
        and matches(t["title"], t["body"], t.get("customer", ""), t.get("category", ""))
    ]
    return {"tickets": [_summary(t) for t in hits[:MAX_SEARCH_RESULTS]], "total": len(hits)}


@tool("read", IdArgs, target="id")
def tickets_get(ws: Workspace, a: IdArgs) -> dict:
    """Get one ticket with its comments."""
    return SERVICE.detached_record(ws.find(ws.state["tickets"]["tickets"], a.id, "ticket"))


@tool("write", UpdateArgs, target="id")
def tickets_update(ws: Workspace, a: UpdateArgs) -> dict:
    """Change a ticket's status, assignee, priority, category or customer, and/or add a comment."""
    ticket = ws.find(ws.state["tickets"]["tickets"], a.id, "ticket")
    if all(getattr(a, name) is None for name in ("status", "assignee", "comment", "priority", "category", "customer")):
        raise ToolError(400, "nothing to update")
    if a.comment is not None:
        ws.check_text_size(a.comment, "comment")
        ticket["comments"].append({"author": ws.me["email"], "text": a.comment, "ts": ws.clock()})
    for name in ("status", "assignee", "priority"):
        value = getattr(a, name)
        if value is not None:
            ticket[name] = value
    for name in ("category", "customer"):
        value = getattr(a, name)
        if value is not None:
            set_sparse(ticket, name, value, "")
    return _summary(ticket)


@tool("write", TagArgs, target="id")
def tickets_tag(ws: Workspace, a: TagArgs) -> dict:
    """Add tags to a ticket and/or remove some (tags are free words such as `vip` or `refund`)."""
    ticket = ws.find(ws.state["tickets"]["tickets"], a.id, "ticket")
    set_sparse(ticket, "tags", edit_labels(ticket.get("tags", []), a.add, a.remove), [])
    return _summary(ticket)


@tool("write", CreateArgs)
def tickets_create(ws: Workspace, a: CreateArgs) -> dict:
    """Open a new ticket."""
    ws.check_text_size(a.body, "body")
    tickets = ws.state["tickets"]["tickets"]
    ticket = {
        "id": ws.new_id(tickets, "t"),
        "title": a.title,
        "body": a.body,
        "status": "open",
        "assignee": a.assignee,
        "priority": "normal",
        "comments": [],
    }
    tickets.append(ticket)
    return _summary(ticket)
