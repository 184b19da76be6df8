"""files: a flat in-memory tree of UTF-8 text files keyed by normalized relative path."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from pydantic import AfterValidator

from coworkenv.workspace.paths import is_normal_path, normalize_path
from coworkenv.workspace.service import Service, added_removed, register_service
from coworkenv.workspace.tool_errors import ToolError
from coworkenv.workspace.tools import Args, tool

if TYPE_CHECKING:
    from coworkenv.workspace.runtime import Workspace

MAX_TOTAL_BYTES_FACTOR = 16


def _normal_paths(files: dict[str, str]) -> dict[str, str]:
    for path in files:
        if not is_normal_path(path):
            raise ValueError(f"file path {path!r} must be relative and normalized (no '..', '//', leading '/')")
    return files


Files = Annotated[dict[str, str], AfterValidator(_normal_paths)]
"""Path → text content; paths are relative and normalized."""


def diff_files(before: dict[str, str], after: dict[str, str]) -> dict[str, Any]:
    return {
        **added_removed(before, after),
        "changed": sorted(p for p in before.keys() & after.keys() if before[p] != after[p]),
    }


def add_file(d: Any, path: str, content: str) -> str:
    d.state["files"][path] = content
    return path


SERVICE = register_service(
    Service(
        name="files",
        writes="authoring",
        state=Files,
        description="A flat tree of UTF-8 text files keyed by normalized relative path.",
        diff=diff_files,
        draft={"add_file": add_file},
        targets=lambda state, argument: sorted(state["files"]),
    )
)


class ListArgs(Args):
    dir: str = ""


class PathArgs(Args):
    path: str


class WriteArgs(Args):
    path: str
    content: str


class MoveArgs(Args):
    src: str
    dst: str


@tool("read", ListArgs)
def files_list(ws: Workspace, a: ListArgs) -> dict:
    """List the files under a directory (recursively), with their sizes. `dir` is relative to the workspace root; empty for the root."""
    root = normalize_path(a.dir, allow_root=True)
    prefix = f"{root}/" if root else ""
    files = ws.state["files"]
    entries = [{"path": p, "size": len(files[p].encode("utf-8"))} for p in sorted(files) if p.startswith(prefix)]
    if root and not entries:
        raise ToolError(404, f"directory {root!r} not found")
    return {"dir": root, "files": entries}


@tool("read", PathArgs, target="path")
def files_read(ws: Workspace, a: PathArgs) -> dict:
    """Read a text file."""
    path = normalize_path(a.path)
    if path not in ws.state["files"]:
        raise ToolError(404, f"file {path!r} not found")
    return {"path": path, "content": ws.state["files"][path]}


def _check_free(files: dict[str, str], path: str) -> None:
    """A path cannot be both a file and a directory, in either direction."""
    if any(p.startswith(path + "/") for p in files):
        raise ToolError(409, f"{path!r} is a directory")
    parts = path.split("/")
    for i in range(1, len(parts)):
        if "/".join(parts[:i]) in files:
            raise ToolError(409, f"{'/'.join(parts[:i])!r} is a file, not a directory")


@tool("write", WriteArgs, target="path")
def files_write(ws: Workspace, a: WriteArgs) -> dict:
    """Create or overwrite a text file with the given content."""
    path = normalize_path(a.path)
    files = ws.state["files"]
    _check_free(files, path)
    ws.check_text_size(a.content, "content")
    total = sum(len(c) for p, c in files.items() if p != path) + len(a.content)
    if total > ws.max_write_bytes * MAX_TOTAL_BYTES_FACTOR:
        raise ToolError(400, "the workspace is full")
    created = path not in files
    files[path] = a.content
    return {"path": path, "created": created, "size": len(a.content.encode("utf-8"))}


@tool("destructive", PathArgs, target="path")
def files_delete(ws: Workspace, a: PathArgs) -> dict:
    """Delete a file."""
    path = normalize_path(a.path)
    if path not in ws.state["files"]:
        raise ToolError(404, f"file {path!r} not found")
    del ws.state["files"][path]
    return {"path": path, "deleted": True}


@tool("write", MoveArgs, target="src")
def files_move(ws: Workspace, a: MoveArgs) -> dict:
    """Move or rename a file. Fails if the destination exists."""
    src, dst = normalize_path(a.src), normalize_path(a.dst)
    files = ws.state["files"]
    if src not in files:
        raise ToolError(404, f"file {src!r} not found")
    if dst in files:
        raise ToolError(409, f"{dst!r} already exists")
    _check_free(files, dst)
    files[dst] = files.pop(src)
    return {"src": src, "dst": dst}
