"""The tool catalog (DESIGN §3, contract): one registry, each tool's JSON schema generated from its args model."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict

from coworkenv.registry import Registry

if TYPE_CHECKING:
    from coworkenv.workspace.workspace import Workspace

ToolKind = Literal["read", "write", "destructive"]


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
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": _parameters(self.args)},
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
    if isinstance(node, dict):
        return {k: _strip_titles(v) for k, v in node.items() if k != "title"}
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
