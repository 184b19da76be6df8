"""Simulated workspace services, their tools, snapshots and diffs."""

from coworkenv.workspace import services  # noqa: F401  (registers every tool)
from coworkenv.workspace.tools import TOOLS, Tool, tool_schemas
from coworkenv.workspace.workspace import AuditEntry, Workspace

__all__ = ["TOOLS", "AuditEntry", "Tool", "Workspace", "tool_schemas"]
