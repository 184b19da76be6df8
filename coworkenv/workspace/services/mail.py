"""mail: one mailbox with folders; sent mail lands in `sent`, stamped with the workspace clock."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pydantic import Field

from coworkenv.workspace.errors import ToolError
from coworkenv.workspace.records import Instant, Record
from coworkenv.workspace.service import Service, register_service
from coworkenv.workspace.tools import MAX_SEARCH_RESULTS, Args, Short, addresses, check_address, detached, text_matches, tool

if TYPE_CHECKING:
    from coworkenv.workspace.runtime import Workspace

Addresses = str | list[str]


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


def add_mail(
    d: Any, sender: str, subject: str, body: str, *, to: Sequence[str] | None = None, cc: Sequence[str] = (),
    folder: str = "inbox", date: str | None = None,
) -> str:  # fmt: skip
    """A message in the draft's mailbox (to the agent by default, dated in the last few days)."""
    mid = d.next_id("m")
    d.records("mail").append({
        "id": mid, "folder": folder, "from": sender, "to": list(to if to is not None else [d.me["email"]]),
        "cc": list(cc), "subject": subject, "body": body, "date": date or d.at(-d.rng.randrange(1, 6), d.rng.randrange(7, 18)),
    })  # fmt: skip
    return mid


def _targets(state: dict[str, Any], argument: str) -> list[str]:
    """Message ids; for `to`, one glob per outside domain the workspace knows of (`*@vendor.test`)."""
    if argument != "to":
        return [m["id"] for m in state["mail"]["messages"]]
    me = state["me"]["email"].lower()
    seen = [p["email"] for p in state["contacts"]["people"]]
    for m in state["mail"]["messages"]:
        seen += [m["from"], *m["to"], *m["cc"]]
    domains = sorted({a.lower().rsplit("@", 1)[-1] for a in seen if "@" in a} - {me.rsplit("@", 1)[-1]})
    return [f"*@{d}" for d in domains]


SERVICE = register_service(Service(
    name="mail", state=MailState, description="One mailbox with folders; sent mail lands in `sent`.",
    collection="messages", draft={"add_mail": add_mail}, targets=_targets,
))  # fmt: skip


class SearchArgs(Args):
    query: Short = ""
    folder: Short | None = None


class IdArgs(Args):
    id: Short


class SendArgs(Args):
    to: Addresses
    subject: Short
    body: str
    cc: Addresses | None = None


class ReplyArgs(Args):
    id: Short
    body: str


class MoveArgs(Args):
    id: Short
    folder: str = Field(min_length=1, max_length=64)


def _summary(m: dict) -> dict:
    return {"id": m["id"], "folder": m["folder"], "from": m["from"], "to": list(m["to"]), "subject": m["subject"], "date": m["date"]}


def _send(ws: Workspace, to: list[str], cc: list[str], subject: str, body: str) -> dict:
    if not to:
        raise ToolError(400, "at least one recipient is required")
    ws.check_text_size(subject, "subject")
    ws.check_text_size(body, "body")
    messages = ws.state["mail"]["messages"]
    message = {
        "id": ws.new_id(messages, "m"), "folder": "sent", "from": ws.me["email"], "to": to, "cc": cc,
        "subject": subject, "body": body, "date": ws.clock(),
    }  # fmt: skip
    messages.append(message)
    return {"id": message["id"], "sent": True}


@tool("read", SearchArgs)
def mail_search(ws: Workspace, a: SearchArgs) -> dict:
    """Search mail by words in sender, recipients, subject and body (all words must match), newest first. Optionally limit to one folder."""
    hits = [
        m for m in ws.state["mail"]["messages"]
        if (a.folder is None or m["folder"] == a.folder)
        and text_matches(a.query, m["from"], " ".join(m["to"]), " ".join(m["cc"]), m["subject"], m["body"])
    ]  # fmt: skip
    hits.sort(key=lambda m: (m["date"], m["id"]), reverse=True)
    return {"messages": [_summary(m) for m in hits[:MAX_SEARCH_RESULTS]], "total": len(hits)}


@tool("read", IdArgs, target="id")
def mail_read(ws: Workspace, a: IdArgs) -> dict:
    """Read one message in full."""
    return detached(ws.find(ws.state["mail"]["messages"], a.id, "message"))


@tool("write", SendArgs, target="to")
def mail_send(ws: Workspace, a: SendArgs) -> dict:
    """Send a new message. `to` and `cc` take one address or a list of addresses."""
    return _send(ws, addresses(a.to), addresses(a.cc), a.subject, a.body)


@tool("write", ReplyArgs, target="id")
def mail_reply(ws: Workspace, a: ReplyArgs) -> dict:
    """Reply to the sender of a message."""
    original = ws.find(ws.state["mail"]["messages"], a.id, "message")
    subject = original["subject"]
    if not subject.lower().startswith("re:"):
        subject = f"Re: {subject}"
    return _send(ws, [check_address(original["from"])], [], subject, a.body)


@tool("write", MoveArgs, target="id")
def mail_move(ws: Workspace, a: MoveArgs) -> dict:
    """Move a message to a folder (for example `archive`); the folder is created if needed."""
    message = ws.find(ws.state["mail"]["messages"], a.id, "message")
    message["folder"] = a.folder
    return {"id": a.id, "folder": a.folder}


@tool("destructive", IdArgs, target="id")
def mail_delete(ws: Workspace, a: IdArgs) -> dict:
    """Delete a message permanently."""
    ws.remove(ws.state["mail"]["messages"], a.id, "message")
    return {"id": a.id, "deleted": True}
