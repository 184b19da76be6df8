"""The one way to read a JSON input and to write an output: a user's file is read whole or refused with one line naming
it; an output appears whole, under its name, only when everything that makes it has succeeded."""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from coworkenv.caps import CAPS
from coworkenv.errors import CoworkEnvError

MAX_DEPTH = CAPS.file_json_depth


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not valid JSON")


def _reason(exc: OSError) -> str:
    """The system's reason, also out of pyarrow's wording (`... Detail: [errno 2] No such file or directory`)."""
    found = re.search(r"\[errno \d+\] (.+)$", str(exc))
    return found.group(1) if found else exc.strerror or type(exc).__name__


@contextmanager
def _reading(path: Path) -> Iterator[None]:
    """Reading `path` as UTF-8 text, its failures as one line naming it (missing, a directory, unreadable, not UTF-8)."""
    try:
        yield
    except FileNotFoundError:
        raise CoworkEnvError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise CoworkEnvError(f"{path}: is a directory, not a file") from None
    except UnicodeDecodeError as exc:
        raise CoworkEnvError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise CoworkEnvError(f"{path}: cannot read: {_reason(exc)}") from None


def read_text(path: str | os.PathLike[str]) -> str:
    """A UTF-8 text file, or a one-line error naming it (missing, a directory, unreadable, not UTF-8)."""
    path = Path(path)
    with _reading(path):
        return path.read_text(encoding="utf-8")


def iter_lines(path: str | os.PathLike[str]) -> Iterator[str]:
    """The lines of a UTF-8 text file one at a time, without their line ends; the errors are `read_text`'s."""
    path = Path(path)
    with _reading(path), path.open(encoding="utf-8") as lines:
        for line in lines:
            yield line.rstrip("\r\n")


def check_values(data: Any, where: str) -> None:
    """Depth, number and text checks without recursion: `1e999` would be read as infinity, and lone surrogates
    (`"\\ud800"`) cannot be written as UTF-8 anywhere."""
    stack = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            items: list[Any] = [*value.keys(), *value.values()]
        elif isinstance(value, list):
            items = value
        else:
            if isinstance(value, float) and not math.isfinite(value):
                raise CoworkEnvError(f"{where}: a number too large for a 64-bit float")
            if isinstance(value, str):
                try:
                    value.encode("utf-8")
                except UnicodeEncodeError:
                    raise CoworkEnvError(
                        f"{where}: text {value[:40]!r} holds a lone surrogate (not valid Unicode)"
                    ) from None
            continue
        if depth > MAX_DEPTH:
            raise CoworkEnvError(f"{where}: nested deeper than {MAX_DEPTH} levels")
        stack.extend((item, depth + 1) for item in items)


def parse_json(text: str, where: str) -> Any:
    """JSON text → plain data, or a one-line error naming `where` (not JSON, NaN/Infinity, too deep, lone surrogates)."""
    try:
        data = json.loads(text, parse_constant=_reject_constant)
    except RecursionError:
        raise CoworkEnvError(f"{where}: nested deeper than {MAX_DEPTH} levels") from None
    except ValueError as exc:
        raise CoworkEnvError(f"{where}: not valid JSON: {exc}") from None
    check_values(data, where)
    return data


def read_json(path: str | os.PathLike[str]) -> Any:
    return parse_json(read_text(path), str(path))


def parse_yaml(text: str, where: str) -> Any:
    """YAML text (YAML's safe loader) → plain data, or a one-line error naming `where` and the line: not YAML, too deep,
    an integer too long for Python to convert, NaN/Infinity, lone surrogates."""
    import yaml

    try:
        data = yaml.safe_load(text)
    except RecursionError:
        raise CoworkEnvError(f"{where}: nested deeper than {MAX_DEPTH} levels") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f"{where}:{mark.line + 1}" if mark is not None else where
        raise CoworkEnvError(f"{at}: not valid YAML ({getattr(exc, 'problem', None) or type(exc).__name__})") from None
    except ValueError as exc:  # an integer of more than 4,300 digits
        raise CoworkEnvError(f"{where}: not valid YAML ({str(exc).split(':')[0]})") from None
    check_values(data, where)
    return data


# --- outputs ---------------------------------------------------------------------------------------------------


def _prepare(dest: Path, folder: bool) -> tuple[Path, Path | None]:
    """The temporary path next to `dest` (in its folder, so the rename stays on one file system), after checking that
    `dest` can be replaced by a file or folder at all: a bad destination is refused before any work is done. Also the
    outermost folder this created for it (None: its folder was there), for a failure to take away again."""
    if dest.is_dir() and not folder:
        raise CoworkEnvError(f"{dest}: is a directory; give a file name")
    if dest.exists() and not dest.is_dir() and folder:
        raise CoworkEnvError(f"{dest}: is a file; give a folder")
    created = outermost_missing(dest.parent)
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise CoworkEnvError(f"{dest}: cannot write: a parent of it is a file, not a folder") from None
    except OSError as exc:
        raise CoworkEnvError(f"{dest}: cannot write: {_reason(exc)}") from None
    return dest.with_name(f".{dest.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"), created


def outermost_missing(path: Path) -> Path | None:
    """The outermost of `path` and the folders above it that does not exist: the first folder that making `path` creates
    (None: `path` is there). With `remove_created`, what a failed command takes away again."""
    return next((p for p in reversed([path.absolute(), *path.absolute().parents]) if not p.exists()), None)


def remove_created(folder: Path, created: Path | None) -> None:
    """The folders a command made (`outermost_missing` before it ran), from `folder` up to `created`, where they are
    still empty."""
    if created is None:
        return
    for path in [folder.absolute(), *folder.absolute().parents]:
        try:
            path.rmdir()
        except OSError:  # not empty (another writer's output), or gone
            return
        if path == created:
            return


def remove_path(path: Path) -> None:
    """A file or a folder with everything in it (a link: the link only); nothing where nothing is."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


@contextmanager
def staged(dest: str | os.PathLike[str], folder: bool = False) -> Iterator[Path]:
    """A temporary path next to `dest` to write the output to (a folder, created, when `folder`); renamed over `dest`
    when the block succeeds, removed when it fails, so `dest` is either untouched or whole."""
    dest = Path(dest)
    tmp, created = _prepare(dest, folder)
    try:
        if folder:
            try:
                tmp.mkdir()
            except OSError as exc:
                raise CoworkEnvError(f"{dest}: cannot write: {_reason(exc)}") from None
        yield tmp
        _rename(tmp, dest, folder)
    except OSError as exc:
        remove_path(tmp)
        remove_created(dest.parent, created)
        if tmp.name in f"{exc.filename} {exc}":  # the temporary's name means nothing to whoever asked for `dest`
            raise CoworkEnvError(f"{dest}: cannot write: {_reason(exc)}") from None
        raise
    except BaseException:
        remove_path(tmp)
        remove_created(dest.parent, created)
        raise


def _rename(tmp: Path, dest: Path, folder: bool) -> None:
    try:
        if folder and dest.is_dir():
            old = dest.with_name(f".{dest.name}.old-{uuid.uuid4().hex[:8]}")  # a folder cannot replace a non-empty one
            dest.rename(old)
            try:
                tmp.rename(dest)
            except BaseException:
                old.rename(dest)  # the previous output stays where it was
                raise
            remove_path(old)
        else:
            tmp.replace(dest)
    except OSError as exc:
        raise CoworkEnvError(f"{dest}: cannot write: {_reason(exc)}") from None


def write_output(dest: str | os.PathLike[str], text: str) -> None:
    """A text output (UTF-8), whole or not at all."""
    with staged(dest) as tmp:
        try:
            tmp.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise CoworkEnvError(f"{dest}: cannot write: {_reason(exc)}") from None


@contextmanager
def staged_file(dest: str | os.PathLike[str] | None) -> Iterator[Path | None]:
    """`staged(dest)` for an optional output file (None: nothing to stage, the command prints instead)."""
    if dest is None:
        yield None
        return
    with staged(dest) as tmp:
        yield tmp


def fsync_dir(path: str | os.PathLike[str]) -> None:
    """Make a directory's entries (a file created or renamed in it) durable; best effort where the filesystem refuses."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:  # some filesystems refuse fsync on directories
        pass
    finally:
        os.close(fd)
