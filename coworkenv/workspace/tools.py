"""The tool catalog (docs/design/contracts.md, "Tools"): one registry, each tool's JSON schema generated from its args
model, and the helpers tool implementations share."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from coworkenv.registry import Registry
from coworkenv.workspace.tool_errors import ToolError

if TYPE_CHECKING:
    from coworkenv.workspace.runtime import Workspace

ToolKind = Literal["read", "write", "destructive"]
SchemaFor = Callable[[dict[str, Any], dict[str, Any]], dict[str, Any] | None]

Short = Annotated[str, Field(max_length=1000)]
"""Ids, names, queries, subjects: anything but a body of text. Bodies are capped by the workspace's write limit."""
Label = Annotated[str, Field(min_length=1, max_length=64)]
"""A tag, label, category, priority or status: an open vocabulary of short words."""


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
    capability: str = "retrieval"
    """The capability a call exercises: `retrieval` for a read, its service's `writes` for a change unless the tool
    says otherwise. The repairers, the battery and the planner read it here, never from a table of tool names."""
    target: str | None = None
    """The argument that names what a call acts on (`id`, `path`, `to`, …): what a narrowed prohibited rule pins down."""
    schema_for: SchemaFor | None = field(default=None, repr=False)
    """(the generic schema, a task's initial workspace) → the schema made for that task, or None to keep the generic
    one: e.g. the `records` tools name the task's collections and their fields."""

    def openai_schema(self, state: dict[str, Any] | None = None) -> dict[str, Any]:
        """The tool's schema; with a workspace state, the one made for that workspace (never change either)."""
        base = _openai_schema(self)
        if state is None or self.schema_for is None:
            return base
        return self.schema_for(base, state) or base


@cache
def _openai_schema(tool: Tool) -> dict[str, Any]:
    """Built once per tool: episodes hand the same (read-only) schemas to every policy."""
    return {
        "type": "function",
        "function": {"name": tool.name, "description": tool.description, "parameters": _parameters(tool.args)},
    }


TOOLS: Registry[Tool] = Registry("tool")


def tool(
    kind: ToolKind,
    args: type[Args],
    *,
    capability: str | None = None,
    target: str | None = None,
    schema_for: SchemaFor | None = None,
) -> Callable[[Callable], Callable]:
    """Register `fn` as the tool named after it; `<service>_<verb>`, docstring as its description. Its service must be
    registered first: a change's capability defaults to the service's `writes`."""
    if target is not None and target not in args.model_fields:
        raise ValueError(f"target {target!r} is not an argument of {args.__name__}")

    def decorator(fn: Callable) -> Callable:
        from coworkenv.workspace.service import SERVICES

        service = fn.__name__.split("_", 1)[0]
        declared = capability or ("retrieval" if kind == "read" else SERVICES.get(service).writes)
        if declared is None:
            raise ValueError(
                f"{fn.__name__}: a {kind} tool of {service!r}, which declares no capability for its writes"
            )
        description = inspect.getdoc(fn) or ""
        TOOLS.add(fn.__name__, Tool(fn.__name__, service, kind, description, args, fn, declared, target, schema_for))
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


def catalog_text() -> str:
    """The catalog as prompt text: one line per tool with its arguments (`?` marks optional ones) and kind."""
    lines = []
    for name, t in TOOLS.items():
        params = t.openai_schema()["function"]["parameters"]
        required = set(params.get("required", []))
        args = ", ".join(f"{p}{'' if p in required else '?'}" for p in params.get("properties", {}))
        lines.append(f"- {name}({args}) [{t.kind}]: {t.description}")
    return "\n".join(lines)


def tool_schemas(names: list[str] | None = None, state: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """OpenAI `tools=[...]` entries for these tools (all of them by default); with a workspace state, made for it
    (`Tool.schema_for`; `TaskSpec.tool_schemas` caches a task's)."""
    return [TOOLS.get(n).openai_schema(state) for n in (names if names is not None else TOOLS.names())]


# --- helpers tool implementations share ---------------------------------------------------------------------

MAX_SEARCH_RESULTS = 50
_EMAIL = re.compile(r"^[^@\s,;<>]+@[^@\s,;<>]+\.[^@\s,;<>]+$")


def check_address(address: str) -> str:
    if not _EMAIL.match(address) or len(address) > 254:
        raise ToolError(400, f"not an email address: {address!r}")
    return address


def addresses(value: str | list[str] | None) -> list[str]:
    if value is None:
        return []
    items = [value] if isinstance(value, str) else list(value)
    return [check_address(a) for a in items]


def text_matcher(query: str) -> Callable[..., bool]:
    """`matches(*texts)`: every whitespace-separated term of the query appears in one of the texts (case-insensitive).
    The query is split once per search, not once per record searched."""
    terms = query.lower().split()

    def matches(*texts: str) -> bool:
        haystack = "\n".join(texts).lower()
        for term in terms:
            if term not in haystack:
                return False
        return True

    return matches


def edit_labels(current: list[str], add: list[str], remove: list[str]) -> list[str]:
    """Labels after adding and removing some, in first-added order; compared case-insensitively, as checks do."""
    if not add and not remove:
        raise ToolError(400, "give labels to add or to remove")
    gone = {x.lower() for x in remove}
    out: list[str] = []
    for label in [*current, *add]:
        if label.lower() not in gone and label.lower() not in {x.lower() for x in out}:
            out.append(label)
    return out
