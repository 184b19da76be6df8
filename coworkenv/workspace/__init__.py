"""Simulated workspace services (one module each), their tools, the workspace schema and diffs.

The runtime that dispatches tool calls is `coworkenv.workspace.runtime.Workspace`; nothing here imports it.
"""

from coworkenv.workspace.service import SERVICES, Service
from coworkenv.workspace.state import COLLECTIONS, SERVICE_NAMES, WorkspaceSpec
from coworkenv.workspace.tools import TOOLS, Tool, tool_schemas

__all__ = ["COLLECTIONS", "SERVICES", "SERVICE_NAMES", "TOOLS", "Service", "Tool", "WorkspaceSpec", "tool_schemas"]
