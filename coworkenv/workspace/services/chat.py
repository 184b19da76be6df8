"""chat: channels of timestamped messages."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import Field

from coworkenv.frozen import EMPTY_DICT
from coworkenv.workspace.record_types import Instant, Record
from coworkenv.workspace.service import Service, added_removed, register_service
from coworkenv.workspace.tool_errors import ToolError
from coworkenv.workspace.tools import Args, Short, tool

if TYPE_CHECKING:
    from coworkenv.workspace.runtime import Workspace


class ChatMessage(Record):
    from_: str = Field(alias="from")
    text: str
    ts: Instant


class ChatState(Record):
    channels: dict[str, list[ChatMessage]] = EMPTY_DICT


def diff_chat(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """Channels added and removed, and the messages posted to each channel."""
    old, new = before["channels"], after["channels"]
    posted = {ch: msgs[len(old.get(ch, [])) :] for ch, msgs in sorted(new.items()) if msgs != old.get(ch, [])}
    return {**added_removed(old, new), "posted": posted}


def add_chat(d: Any, channel: str, sender: str, text: str, ts: str | None = None) -> None:
    d.state["chat"]["channels"].setdefault(channel, []).append({"from": sender, "text": text, "ts": ts or d.at(-1, 10)})


SERVICE = register_service(
    Service(
        name="chat",
        writes="communication",
        state=ChatState,
        description="Channels of timestamped messages.",
        diff=diff_chat,
        draft={"add_chat": add_chat},
        targets=lambda state, argument: sorted(state["chat"]["channels"]),
    )
)


class ReadArgs(Args):
    channel: Short


class PostArgs(Args):
    channel: Short
    text: str = Field(min_length=1)


def _channel(ws: Workspace, name: str) -> list[dict]:
    channel = ws.state["chat"]["channels"].get(name.lstrip("#"))
    if channel is None:
        raise ToolError(404, f"channel {name!r} not found")
    return channel


@tool("read", ReadArgs, target="channel")
def chat_read(ws: Workspace, a: ReadArgs) -> dict:
    """Read a channel's messages, oldest first."""
    return {"channel": a.channel.lstrip("#"), "messages": [dict(m) for m in _channel(ws, a.channel)]}


@tool("write", PostArgs, target="channel")
def chat_post(ws: Workspace, a: PostArgs) -> dict:
    """Post a message to a channel."""
    channel = _channel(ws, a.channel)
    ws.check_text_size(a.text, "text")
    channel.append({"from": ws.me["name"], "text": a.text, "ts": ws.clock()})
    return {"channel": a.channel.lstrip("#"), "posted": True}
