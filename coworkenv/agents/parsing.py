"""Reading tool calls out of a model's text (docs/design/agents-and-rollouts.md, "Agents"). Models that call tools in text write
Hermes/Qwen blocks, `<tool_call>{"name": ..., "arguments": {...}}</tool_call>`, or put a bare JSON call in the
content (`{"name": ..., "arguments": ...}`, `{"tool_calls": [...]}`, possibly in a code fence). Output that tries
to call a tool and cannot be read is a *format error* of that turn: the text stays a plain message, nothing raises.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

_BLOCK = re.compile(r"<tool_call>(.*?)(?:</tool_call>|\Z)", re.DOTALL)
_THINK = re.compile(r"<think>.*?(?:</think>|\Z)", re.DOTALL)
_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


@dataclass(frozen=True)
class ParsedReply:
    content: str
    """The text outside tool-call blocks (reasoning removed)."""
    tool_calls: list[dict[str, Any]]
    """OpenAI tool calls: `{"id", "type": "function", "function": {"name", "arguments": <JSON string>}}`."""
    format_error: str | None = None

    def message(self) -> dict[str, Any]:
        """The assistant message: tool calls when there are any, else the text."""
        if self.tool_calls:
            return {"role": "assistant", "content": self.content or None, "tool_calls": self.tool_calls}
        return {"role": "assistant", "content": self.content}


def _call(value: Any, number: int) -> dict[str, Any]:
    """One call object → an OpenAI tool call; ValueError names what is wrong."""
    if not isinstance(value, dict):
        raise ValueError(f"a tool call must be a JSON object, got {type(value).__name__}")
    function = value.get("function") if isinstance(value.get("function"), dict) else value
    name = function.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ValueError("a tool call needs a non-empty string `name`")
    arguments = function.get("arguments", function.get("parameters", {}))
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except ValueError:
            raise ValueError(f"the arguments of {name!r} are not JSON") from None
    if not isinstance(arguments, dict):
        raise ValueError(f"the arguments of {name!r} must be a JSON object, got {type(arguments).__name__}")
    text = json.dumps(arguments, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate (from a `\ud800` escape) cannot be written as UTF-8, so no trajectory or rollout table
        # could hold the message; kept as its escape, the call reaches the workspace, which refuses it (400).
        text = json.dumps(arguments)
    return {"id": f"call_{number}", "type": "function", "function": {"name": name.strip(), "arguments": text}}


def _calls(value: Any, start: int) -> list[dict[str, Any]]:
    items = value["tool_calls"] if isinstance(value, dict) and isinstance(value.get("tool_calls"), list) else value
    items = items if isinstance(items, list) else [items]
    return [_call(item, start + i) for i, item in enumerate(items)]


def _json_call(text: str) -> Any | None:
    """The JSON value of content that is nothing but a call (bare or fenced); None for ordinary prose."""
    fenced = _FENCE.match(text)
    body = fenced.group(1) if fenced else text
    if not body.startswith(("{", "[")):
        return None
    try:
        value = json.loads(body)
    except ValueError:
        return None
    looks_like_call = isinstance(value, dict) and ("name" in value or "tool_calls" in value or "function" in value)
    looks_like_calls = (
        isinstance(value, list)
        and value
        and all(isinstance(v, dict) and ("name" in v or "function" in v) for v in value)
    )
    return value if looks_like_call or looks_like_calls else None


def parse_reply(text: str | None, *, first_id: int = 1) -> ParsedReply:
    """A model's raw text as an assistant message's content and tool calls (ids `call_<n>` from `first_id`)."""
    text = _THINK.sub("", text or "").strip()
    blocks = _BLOCK.findall(text)
    if blocks:
        content = _BLOCK.sub("", text).strip()
        calls: list[dict[str, Any]] = []
        for block in blocks:
            try:
                calls += _calls(json.loads(block.strip()), first_id + len(calls))
            except ValueError as exc:
                reason = (
                    str(exc)
                    if "tool call" in str(exc) or "arguments" in str(exc)
                    else "a <tool_call> block is not valid JSON"
                )
                return ParsedReply(content=text, tool_calls=[], format_error=reason)
        return ParsedReply(content=content, tool_calls=calls)
    if "<tool_call" in text or "</tool_call>" in text:
        return ParsedReply(content=text, tool_calls=[], format_error="an unbalanced <tool_call> tag")
    value = _json_call(text)
    if value is None:
        return ParsedReply(content=text, tool_calls=[])
    try:
        return ParsedReply(content="", tool_calls=_calls(value, first_id))
    except ValueError as exc:
        return ParsedReply(content=text, tool_calls=[], format_error=str(exc))


def native_calls(calls: Any, *, first_id: int = 1) -> list[dict[str, Any]]:
    """An endpoint's native `tool_calls` checked and renumbered `call_<n>` from `first_id` (ids the conversation
    can rely on, the same on every run); ValueError names what is malformed (a missing name, arguments that are
    not a JSON object)."""
    if not isinstance(calls, list):
        raise ValueError(f"tool_calls must be a list, got {type(calls).__name__}")
    return _calls(calls, first_id)
