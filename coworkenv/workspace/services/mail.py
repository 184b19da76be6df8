"""mail: one mailbox with folders; sent mail lands in `sent`, stamped with the workspace clock; drafts wait in
`drafts` until sent (a draft is never mail the agent sent)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pydantic import Field

from coworkenv.frozen import EMPTY_LIST
from coworkenv.workspace.record_types import Instant, Record, set_sparse, sparse
from coworkenv.workspace.service import Service, register_service
from coworkenv.workspace.tool_errors import ToolError
from coworkenv.workspace.tools import (
    MAX_SEARCH_RESULTS,
    Args,
    Label,
    Short,
    addresses,
    check_address,
    edit_labels,
    text_matcher,
    tool,
)

if TYPE_CHECKING:
    from coworkenv.workspace.runtime import Workspace

Addresses = str | list[str]
DRAFTS = "drafts"
"""The folder of unsent drafts: only `mail_draft` puts a message there, only `mail_send_draft` takes one out."""


class MailMessage(Record):
    id: str
    folder: str = "inbox"
    from_: str = Field(alias="from")
    to: list[str] = EMPTY_LIST
    cc: list[str] = EMPTY_LIST
    subject: str = ""
    body: str = ""
    date: Instant
    labels: list[str] = sparse([])
    read: bool = sparse(False)
    in_reply_to: str | None = sparse(None)
    """The id of the message this one answers (replies and reply drafts)."""


class MailState(Record):
    messages: list[MailMessage] = EMPTY_LIST


def add_mail(
    d: Any,
    sender: str,
    subject: str,
    body: str,
    *,
    to: Sequence[str] | None = None,
    cc: Sequence[str] = (),
    folder: str = "inbox",
    date: str | None = None,
    labels: Sequence[str] = (),
    read: bool = False,
) -> str:
    """A message in the draft's mailbox (to the agent by default, dated in the last few days)."""
    mid = d.next_id("m")
    message = {
        "id": mid,
        "folder": folder,
        "from": sender,
        "to": list(to if to is not None else [d.me["email"]]),
        "cc": list(cc),
        "subject": subject,
        "body": body,
        "date": date or d.at(-d.rng.randrange(1, 6), d.rng.randrange(7, 18)),
    }
    set_sparse(message, "labels", list(labels), [])
    set_sparse(message, "read", read, False)
    d.records("mail").append(message)
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


SERVICE = register_service(
    Service(
        name="mail",
        writes="communication",
        state=MailState,
        description="One mailbox with folders; sent mail lands in `sent`, unsent drafts in `drafts`.",
        collection="messages",
        draft={"add_mail": add_mail},
        targets=_targets,
    )
)


class SearchArgs(Args):
    query: Short = ""
    folder: Short | None = None
    label: Label | None = None
    unread: bool | None = None


class IdArgs(Args):
    id: Short


class SendArgs(Args):
    to: Addresses
    subject: Short
    body: str
    cc: Addresses | None = None


class DraftArgs(SendArgs):
    reply_to: Short | None = None


class LabelArgs(Args):
    id: Short
    add: list[Label] = Field(default=EMPTY_LIST, max_length=100)
    remove: list[Label] = Field(default=EMPTY_LIST, max_length=100)


class ReadArgs(Args):
    id: Short
    read: bool = True


class ReplyArgs(Args):
    id: Short
    body: str


class MoveArgs(Args):
    id: Short
    folder: str = Field(min_length=1, max_length=64)


def _summary(m: dict) -> dict:
    return {
        "id": m["id"],
        "folder": m["folder"],
        "from": m["from"],
        "to": list(m["to"]),
        "subject": m["subject"],
        "date": m["date"],
        "labels": list(m.get("labels", [])),
        "read": m.get("read", False),
    }


def _compose(
    ws: Workspace, folder: str, to: list[str], cc: list[str], subject: str, body: str, reply_to: str | None = None
) -> dict:
    if not to:
        raise ToolError(400, "at least one recipient is required")
    ws.check_text_size(subject, "subject")
    ws.check_text_size(body, "body")
    messages = ws.state["mail"]["messages"]
    message = {
        "id": ws.new_id(messages, "m"),
        "folder": folder,
        "from": ws.me["email"],
        "to": to,
        "cc": cc,
        "subject": subject,
        "body": body,
        "date": ws.clock(),
    }
    set_sparse(message, "in_reply_to", reply_to, None)
    messages.append(message)
    return message


def _send(ws: Workspace, to: list[str], cc: list[str], subject: str, body: str, reply_to: str | None = None) -> dict:
    return {"id": _compose(ws, "sent", to, cc, subject, body, reply_to)["id"], "sent": True}


def _message(ws: Workspace, mid: str) -> dict:
    return ws.find(ws.state["mail"]["messages"], mid, "message")


@tool("read", SearchArgs)
def mail_search(ws: Workspace, a: SearchArgs) -> dict:
    """Search mail by words in sender, recipients, subject and body (all must match), newest first; optionally by folder, label, unread."""
    matches = text_matcher(a.query)
    hits = [
        m
        for m in ws.state["mail"]["messages"]
        if (a.folder is None or m["folder"] == a.folder)
        and (a.label is None or a.label.lower() in {x.lower() for x in m.get("labels", [])})
        and (a.unread is None or a.unread != m.get("read", False))
        and matches(m["from"], " ".join(m["to"]), " ".join(m["cc"]), m["subject"], m["body"])
    ]
    hits.sort(key=lambda m: (m["date"], m["id"]), reverse=True)
    return {"messages": [_summary(m) for m in hits[:MAX_SEARCH_RESULTS]], "total": len(hits)}


@tool("read", IdArgs, target="id")
def mail_read(ws: Workspace, a: IdArgs) -> dict:
    """Read one message in full (reading does not mark it read: `mail_mark_read` does)."""
    return SERVICE.detached_record(_message(ws, a.id))


@tool("write", SendArgs, target="to")
def mail_send(ws: Workspace, a: SendArgs) -> dict:
    """Send a new message. `to` and `cc` take one address or a list of addresses."""
    return _send(ws, addresses(a.to), addresses(a.cc), a.subject, a.body)


@tool("write", ReplyArgs, target="id")
def mail_reply(ws: Workspace, a: ReplyArgs) -> dict:
    """Reply to the sender of a message."""
    original = _message(ws, a.id)
    return _send(ws, [check_address(original["from"])], [], _re(original["subject"]), a.body, original["id"])


def _re(subject: str) -> str:
    return subject if subject.lower().startswith("re:") else f"Re: {subject}"


@tool("write", DraftArgs, target="to")
def mail_draft(ws: Workspace, a: DraftArgs) -> dict:
    """Save a draft in `drafts` without sending it; `reply_to` is the id of the message it answers. `mail_send_draft` sends it."""
    subject = a.subject
    if a.reply_to is not None:
        original = _message(ws, a.reply_to)  # a 404 for an unknown message, subject given or not
        subject = _re(subject or original["subject"])
    message = _compose(ws, DRAFTS, addresses(a.to), addresses(a.cc), subject, a.body, a.reply_to)
    return {"id": message["id"], "folder": DRAFTS, "sent": False}


@tool("write", IdArgs, target="id")
def mail_send_draft(ws: Workspace, a: IdArgs) -> dict:
    """Send a draft as it is: it moves to `sent`, dated now."""
    message = _message(ws, a.id)
    if message["folder"] != DRAFTS:
        raise ToolError(409, f"message {a.id!r} is not a draft")
    message.update(folder="sent", date=ws.clock())
    return {"id": a.id, "sent": True}


@tool("write", MoveArgs, target="id")
def mail_move(ws: Workspace, a: MoveArgs) -> dict:
    """Move a message to a folder (for example `archive`); the folder is created if needed. Drafts cannot be moved."""
    message = _message(ws, a.id)
    if message["folder"] == DRAFTS or a.folder == DRAFTS:
        raise ToolError(
            409, "drafts are made with mail_draft and leave `drafts` only by mail_send_draft or mail_delete"
        )
    message["folder"] = a.folder
    return {"id": a.id, "folder": a.folder}


@tool("write", LabelArgs, target="id")
def mail_label(ws: Workspace, a: LabelArgs) -> dict:
    """Add labels to a message and/or remove some (labels are free words such as `urgent` or `billing`)."""
    message = _message(ws, a.id)
    set_sparse(message, "labels", edit_labels(message.get("labels", []), a.add, a.remove), [])
    return {"id": a.id, "labels": list(message.get("labels", []))}


@tool("write", ReadArgs, target="id")
def mail_mark_read(ws: Workspace, a: ReadArgs) -> dict:
    """Mark a message read (`read: false` marks it unread)."""
    set_sparse(_message(ws, a.id), "read", a.read, False)
    return {"id": a.id, "read": a.read}


@tool("destructive", IdArgs, target="id")
def mail_delete(ws: Workspace, a: IdArgs) -> dict:
    """Delete a message permanently."""
    ws.remove(ws.state["mail"]["messages"], a.id, "message")
    return {"id": a.id, "deleted": True}
