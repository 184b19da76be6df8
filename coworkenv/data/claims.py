"""Temporaries under `releases/` and the locks that tell a live writer's from an orphan (docs/datasets.md, "Atomicity").

On local disks a writer creates each temporary (a release directory, a `LATEST` temporary) under `releases/.lock`
and holds an `flock` on it for as long as it lives: a temporary whose lock is free belongs to a writer that died,
whatever its age. `releases/.lock` also orders the moves of `LATEST` (`coworkenv.data.latest`). Elsewhere (object
stores have no locks) a temporary is an orphan once it is over a day old.
"""

from __future__ import annotations

import fcntl
import os
import re
import secrets
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress

from coworkenv.data.layout import LOCK_FILE, TMP_PREFIX
from coworkenv.data.root import RELEASES_DIR, DataRoot, open_root

STALE_TMP_SECONDS = 24 * 3600


def tmp_name(what: str) -> str:
    """`.tmp-<what>-<unix time>-<nonce>`: hidden from readers, unique per writer, its age readable from its name."""
    return f"{TMP_PREFIX}{what}-{int(time.time())}-{secrets.token_hex(4)}"


def _stale_tmp(name: str, now: float) -> bool:
    match = re.search(r"-(\d{9,})-[0-9a-f]+$", name)
    return bool(match) and now - int(match.group(1)) > STALE_TMP_SECONDS


@contextmanager
def registry_lock(root: DataRoot) -> Iterator[None]:
    """`releases/.lock` (local roots), held while a writer claims a temporary name, while orphans are removed and while
    `LATEST` is compared and replaced: a cleaner never sees a temporary between its creation and its writer's lock on
    it, and two writers never move `LATEST` at once. Not reentrant (an flock per open file)."""
    fd = os.open(root.join(RELEASES_DIR, LOCK_FILE), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def claim(root: DataRoot, path: str, *, directory: bool) -> int:
    """Create a temporary directory or file and lock it for as long as this writer lives (the returned descriptor is
    closed when it is done): a temporary whose lock is free belongs to a writer that died."""
    with registry_lock(root):
        if directory:
            os.mkdir(path)
            fd = os.open(path, os.O_RDONLY)
        else:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    return fd


def _orphaned(path: str, name: str, now: float) -> int | None:
    """A descriptor holding the lock of a temporary no live writer holds (the caller removes it, then closes it)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # gone (renamed into place, or removed by its writer)
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:  # a live writer holds it
        os.close(fd)
        return None
    except OSError:  # no locks on this filesystem: fall back to the temporary's age
        if _stale_tmp(name, now):
            return fd
        os.close(fd)
        return None
    return fd


def clean_stale_tmp(data_root: str | DataRoot) -> list[str]:
    """Remove temporary release directories and `LATEST` temporaries left by writers that died.

    On local disks a temporary is an orphan when no writer holds its lock (`claim`); elsewhere, and where the
    filesystem has no locks, when it is over a day old."""
    root = open_root(data_root)
    removed: list[str] = []
    try:
        entries = root.fs.ls(root.releases, detail=False)
    except FileNotFoundError:
        return removed
    now = time.time()
    names = [(entry, entry.rstrip("/").rsplit("/", 1)[-1]) for entry in entries]
    names = [(entry, name) for entry, name in names if name.startswith(TMP_PREFIX)]
    if not root.local:
        for entry, name in names:
            if _stale_tmp(name, now):
                with suppress(FileNotFoundError):  # another publisher cleaned it first
                    root.fs.rm(entry, recursive=True)
                    removed.append(name)
        return removed
    with registry_lock(root):
        for entry, name in names:
            fd = _orphaned(entry, name, now)
            if fd is None:
                continue
            try:
                if os.path.isdir(entry):
                    shutil.rmtree(entry)
                else:
                    os.unlink(entry)
                removed.append(name)
            except FileNotFoundError:
                pass
            finally:
                os.close(fd)
    return removed
