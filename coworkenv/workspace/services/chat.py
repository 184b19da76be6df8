"""chat: channels of timestamped messages."""

from __future__ import annotations

from pydantic import Field

from coworkenv.workspace.errors import ToolError
from coworkenv.workspace.tools import Args, Short, tool
from coworkenv.workspace.workspace import Workspace


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


@tool("read", ReadArgs)
def chat_read(ws: Workspace, a: ReadArgs) -> dict:
    """Read a channel's messages, oldest first."""
    return {"channel": a.channel.lstrip("#"), "messages": [dict(m) for m in _channel(ws, a.channel)]}


@tool("write", PostArgs)
def chat_post(ws: Workspace, a: PostArgs) -> dict:
    """Post a message to a channel."""
    channel = _channel(ws, a.channel)
    ws.check_text_size(a.text, "text")
    channel.append({"from": ws.me["name"], "text": a.text, "ts": ws.clock()})
    return {"channel": a.channel.lstrip("#"), "posted": True}
