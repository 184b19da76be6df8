"""The runtime workspace: mutable service state, tool dispatch, fault injection and the audit log."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from coworkenv.errors import format_validation_error
from coworkenv.timeutil import add_seconds
from coworkenv.workspace.audit import AuditEntry
from coworkenv.workspace.faults import FAULT_MESSAGES, fault_for
from coworkenv.workspace.tool_errors import ToolError, error_of, error_result
from coworkenv.workspace.tools import TOOLS

DEFAULT_MAX_WRITE_BYTES = 1_000_000


class Workspace:
    """State is the JSON shape of `WorkspaceSpec`, held as plain dicts so that an episode is cheap.

    With `copy_section`, the sections of `state` (one per service) are shared with others and never changed here:
    before a write tool of a service first runs, its section is replaced with `copy_section(service)`, a private
    copy. Each tool changes only its own service's section, so an episode copies only what it writes."""

    def __init__(
        self,
        state: dict[str, Any],
        *,
        allowed: frozenset[str] | None = None,
        fault_rate: float = 0.0,
        fault_seed: int = 0,
        max_write_bytes: int = DEFAULT_MAX_WRITE_BYTES,
        copy_section: Callable[[str], Any] | None = None,
    ):
        self.state = state
        self.copy_section = copy_section
        self._owned: set[str] = set()
        self.allowed = allowed
        self.fault_rate = fault_rate
        self.fault_seed = fault_seed
        self.max_write_bytes = max_write_bytes
        self.audit: list[AuditEntry] = []
        self.written: set[str] = set()
        """Services a write or destructive tool succeeded on: only their sections can have changed."""
        self._retired: set[str] = set()

    # --- dispatch ---------------------------------------------------------------------------------

    def call(self, name: str, arguments: str | dict[str, Any] | None) -> dict[str, Any]:
        """Run one tool call; every outcome, including rejection, is a JSON result and an audit entry."""
        index = len(self.audit)
        args = _parse_arguments(arguments, 2 * self.max_write_bytes + 4096)
        asked = args if type(args) is dict else None
        result, fault = self._dispatch(name, args, index)
        err = error_of(result)
        if err is None:
            self.audit.append(AuditEntry(index, name, asked, "ok"))
        else:
            self.audit.append(AuditEntry(index, name, asked, "error", err["code"], err["message"], fault))
        return result

    def _dispatch(self, name: str, args: dict[str, Any] | ToolError, index: int) -> tuple[dict[str, Any], bool]:
        spec = TOOLS.find(name) if isinstance(name, str) else None
        if spec is None:
            return error_result(400, TOOLS.unknown_message(str(name))), False
        if self.allowed is not None and name not in self.allowed:
            return error_result(400, f"tool {name!r} is not available in this task"), False
        if type(args) is not dict:
            return args.result(), False
        try:
            # The validator itself: `model_validate` adds a Python call with nothing to do here.
            parsed = spec.args.__pydantic_validator__.validate_python(args)
        except ValidationError as exc:
            return error_result(400, "invalid arguments: " + format_validation_error(exc)), False
        if self.fault_rate > 0.0:
            code = fault_for(self.fault_seed, index, self.fault_rate)
            if code is not None:
                return error_result(code, FAULT_MESSAGES[code]), True
        if spec.kind == "read":
            try:
                return spec.fn(self, parsed), False
            except ToolError as exc:
                return exc.result(), False
        if self.copy_section is not None and spec.service not in self._owned:
            self.state[spec.service] = self.copy_section(spec.service)
            self._owned.add(spec.service)
        try:
            result = spec.fn(self, parsed)
        except ToolError as exc:
            return exc.result(), False
        if error_of(result) is None:
            self.written.add(spec.service)
        return result, False

    # --- helpers for tool implementations -----------------------------------------------------------

    def clock(self) -> str:
        """The current time: the workspace's `now` plus one second per call so far."""
        return add_seconds(self.state["now"], len(self.audit) + 1)

    @property
    def me(self) -> dict[str, str]:
        return self.state["me"]

    def find(self, records: list[dict], rid: str, what: str) -> dict:
        for record in records:
            if record["id"] == rid:
                return record
        raise ToolError(404, f"{what} {rid!r} not found")

    def new_id(self, records: list[dict], prefix: str) -> str:
        """A fresh id, never one a deleted record had: id-based checks and diffs must not confuse the two."""
        taken = {r["id"] for r in records} | self._retired
        n = len(records) + 1
        while f"{prefix}{n}" in taken:
            n += 1
        return f"{prefix}{n}"

    def remove(self, records: list[dict], rid: str, what: str) -> None:
        records.remove(self.find(records, rid, what))
        self._retired.add(rid)

    def check_text_size(self, text: str, what: str) -> None:
        if len(text) > self.max_write_bytes or len(text.encode("utf-8")) > self.max_write_bytes:
            raise ToolError(400, f"{what} is larger than the {self.max_write_bytes}-byte limit")


MAX_ARGUMENT_DEPTH = 16


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)
"""Made once: `json.loads` with an option builds a new decoder on every call, which costs more than the parse."""


def _decode(text: str) -> Any:
    """`_DECODER.decode(text)`. Text that is one object, as agents send it, goes to the C scanner directly: `decode`
    adds two Python calls and two whitespace scans to a parse of a few microseconds. Anything else, and any
    text the scanner stops short on, takes `decode`, which raises the error."""
    if text[:1] == "{" and text[-1:] == "}":
        try:
            value, end = _DECODER.scan_once(text, 0)
        except StopIteration:
            pass
        else:
            if end == len(text):
                return value
    return _DECODER.decode(text)


def _depth(value: Any) -> int:
    """Nesting depth, iteratively: hostile input must not exhaust the interpreter's stack."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, level = stack.pop()
        deepest = max(deepest, level)
        if level > MAX_ARGUMENT_DEPTH:
            break
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
        stack.extend((child, level + 1) for child in children)
    return deepest


def _parse_arguments(arguments: str | dict[str, Any] | None, max_chars: int) -> dict[str, Any] | ToolError:
    """Arguments as the agent sent them, as plain JSON data: a string is parsed, a dict round-tripped, so that
    non-JSON values (NaN, sets, non-string keys) and absurd nesting or size never reach a tool or the audit log."""
    if arguments is None or arguments == "":
        return {}
    if isinstance(arguments, dict):
        try:
            arguments = json.dumps(arguments, allow_nan=False)
        except (TypeError, ValueError, RecursionError):
            return ToolError(400, "arguments must be plain JSON data")
    if not isinstance(arguments, str):
        return ToolError(400, "arguments must be a JSON object")
    if len(arguments) > max_chars:
        return ToolError(400, f"arguments are larger than {max_chars} characters")
    try:
        value = _decode(arguments)
    except (ValueError, RecursionError):
        return ToolError(400, "arguments are not valid JSON")
    if not isinstance(value, dict):
        return ToolError(400, "arguments must be a JSON object")
    # Each level of nesting opens one bracket, so text with few brackets cannot be too deep: the walk runs only
    # where it could find something (almost no real call has more than a handful).
    if arguments.count("{") + arguments.count("[") > MAX_ARGUMENT_DEPTH and _depth(value) > MAX_ARGUMENT_DEPTH:
        return ToolError(400, f"arguments are nested deeper than {MAX_ARGUMENT_DEPTH} levels")
    # A lone surrogate (`"\ud800"`, legal as a JSON escape) cannot be written as UTF-8: kept in the audit log, it
    # would crash hashing the evidence and writing any output. It comes from a `\u` escape or the text itself, so
    # plain ASCII text without escapes (almost every call) needs no look.
    if (not arguments.isascii() or "\\u" in arguments) and _holds_lone_surrogate(value):
        return ToolError(400, "arguments hold a lone surrogate (not valid Unicode)")
    return value


def _holds_lone_surrogate(value: dict[str, Any]) -> bool:
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False
