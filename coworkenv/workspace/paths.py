"""Workspace-relative paths: anything that could name a place outside the workspace is a 400."""

from __future__ import annotations

import re

from coworkenv.workspace.tool_errors import ToolError

MAX_PATH_CHARS = 1024
MAX_NAME_CHARS = 255
_DRIVE = re.compile(r"^[A-Za-z]:")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def normalize_path(path: object, *, allow_root: bool = False) -> str:
    """`a//./b` → `a/b`; rejects absolute paths, `..`, NUL and control bytes, backslashes, overlong names."""
    if not isinstance(path, str):
        raise ToolError(400, "path must be a string")
    if "\x00" in path:
        raise ToolError(400, "path contains a NUL byte")
    if _CONTROL.search(path):
        raise ToolError(400, "path contains a control character")
    if len(path) > MAX_PATH_CHARS:
        raise ToolError(400, f"path is longer than {MAX_PATH_CHARS} characters")
    if path.startswith("/") or _DRIVE.match(path):
        raise ToolError(400, "absolute paths are not allowed; use a path relative to the workspace root")
    if "\\" in path:
        raise ToolError(400, "use '/' as the path separator")
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise ToolError(400, "'..' is not allowed in paths")
    if any(len(p) > MAX_NAME_CHARS for p in parts):
        raise ToolError(400, f"a path component is longer than {MAX_NAME_CHARS} characters")
    if not parts and not allow_root:
        raise ToolError(400, "path is empty")
    return "/".join(parts)


def is_normal_path(path: str) -> bool:
    try:
        return normalize_path(path) == path
    except ToolError:
        return False
