"""The audit log entry: one tool call as the agent asked for it, and how it ended. Grading reads only these."""

from __future__ import annotations

from typing import Any, NamedTuple


class AuditEntry(NamedTuple):
    """A named tuple rather than a frozen dataclass: one is made per tool call, and a frozen dataclass sets each of
    its seven fields through `object.__setattr__`, which costs more than the validation of a call's arguments."""

    index: int
    tool: str
    args: dict[str, Any] | None
    """The parsed arguments; None when they were not a JSON object."""
    status: str
    """`ok` or `error`."""
    code: int | None = None
    error: str | None = None
    fault: bool = False

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "tool": self.tool,
            "args": self.args,
            "status": self.status,
            "code": self.code,
            "error": self.error,
            "fault": self.fault,
        }
