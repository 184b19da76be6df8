"""The tool catalog (DESIGN §3, contract): one registry, each tool's JSON schema generated from its args model."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from coworkenv.registry import Registry

if TYPE_CHECKING:
    from coworkenv.workspace.workspace import Workspace

ToolKind = Literal["read", "write", "destructive"]

Short = Annotated[str, Field(max_length=1000)]
"""Ids, names, queries, subjects: anything but a body of text. Bodies are capped by the workspace's write limit."""


class Args(BaseModel):
    """Base of every tool's arguments: strict types, unknown arguments rejected."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


@dataclass(frozen=True)
class Tool:
    name: str
    service: str
    kind: ToolKind
    description: str
    args: type[Args]
    fn: Callable[[Workspace, Any], dict] = field(repr=False)

    def openai_schema(self) -> dict[str, Any]:
        return _openai_schema(self)


@cache
def _openai_schema(tool: Tool) -> dict[str, Any]:
    """Built once per tool: episodes hand the same (read-only) schemas to every policy."""
    return {
        "type": "function",
        "function": {"name": tool.name, "description": tool.description, "parameters": _parameters(tool.args)},
    }


TOOLS: Registry[Tool] = Registry("tool")


def tool(kind: ToolKind, args: type[Args]) -> Callable[[Callable], Callable]:
    """Register `fn` as the tool named after it; `<service>_<verb>`, docstring as its description."""

    def decorator(fn: Callable) -> Callable:
        service = fn.__name__.split("_", 1)[0]
        description = inspect.getdoc(fn) or ""
        TOOLS.add(fn.__name__, Tool(fn.__name__, service, kind, description, args, fn))
        return fn

    return decorator


def _strip_titles(node: Any) -> Any:
    """Drop pydantic's `title` annotations, but not properties that happen to be named `title`."""
    if isinstance(node, dict):
        return {
            k: ({name: _strip_titles(sub) for name, sub in v.items()} if k == "properties" else _strip_titles(v))
            for k, v in node.items()
            if k != "title" or isinstance(v, dict)
        }
    if isinstance(node, list):
        return [_strip_titles(v) for v in node]
    return node


def _parameters(args: type[Args]) -> dict[str, Any]:
    schema = _strip_titles(args.model_json_schema())
    schema.setdefault("properties", {})
    schema.setdefault("required", [])
    schema["additionalProperties"] = False
    return schema


def tool_schemas(names: list[str] | None = None) -> list[dict[str, Any]]:
    """OpenAI `tools=[...]` entries for these tools (all of them by default)."""
    return [TOOLS.get(n).openai_schema() for n in (names if names is not None else TOOLS.names())]
