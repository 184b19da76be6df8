"""The registry's files under the data root (docs/design/training.md, "Model registry and promotion"):

```
models/<name>/v0001/           the checkpoint, copied in whole, and entry.json (the ModelEntry but its path)
models/<name>/CURRENT          the current version's number (replaced atomically; absent before the first promotion)
models/<name>/decisions.jsonl  every promotion decision of the name, one PromotionDecision per line, appended
models/<name>/.lock            held while a writer changes the name's files
```

Reads go through the data root's filesystem (any fsspec root); writes need a local one, since transformers loads
checkpoints from local folders.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from coworkenv.data.root import DataRoot, local_path
from coworkenv.errors import CoworkEnvError, format_validation_error
from coworkenv.fileio import fsync_dir, parse_json, staged
from coworkenv.models.entry import ModelEntry, check_name

MODELS_DIR = "models"
ENTRY_FILE = "entry.json"
CURRENT_FILE = "CURRENT"
DECISIONS_FILE = "decisions.jsonl"
LOCK_FILE = ".lock"
VERSION_DIR = re.compile(r"^v(\d{4,9})$")


def version_dir(version: int) -> str:
    return f"v{version:04d}"


def writable(root: DataRoot) -> Path:
    """The local folder of the registry (`models/`), or the one-line refusal of a remote data root."""
    return local_path(root, "the model registry (checkpoints are loaded from local folders)") / MODELS_DIR


# --- reading ----------------------------------------------------------------------------------------------------


def _children(root: DataRoot, path: str) -> list[str]:
    """The names of the folders in `path` (none when it is absent)."""
    try:
        entries = root.fs.ls(path, detail=True)
    except (FileNotFoundError, NotADirectoryError):
        return []
    return sorted(e["name"].rstrip("/").rsplit("/", 1)[-1] for e in entries if e.get("type") == "directory")


def _read_bytes(root: DataRoot, path: str) -> bytes | None:
    try:
        return root.fs.cat_file(path)
    except FileNotFoundError:
        return None
    except OSError as exc:  # a folder where the file should be, no permission
        raise CoworkEnvError(f"{root.url_of(path)}: cannot read ({exc.strerror or type(exc).__name__})") from None


def model_names(root: DataRoot) -> list[str]:
    return [n for n in _children(root, root.join(MODELS_DIR)) if not n.startswith(".")]


def versions(root: DataRoot, name: str) -> list[int]:
    """The name's registered versions, oldest first (folders being written are dot-named and skipped)."""
    found = (VERSION_DIR.match(n) for n in _children(root, root.join(MODELS_DIR, name)))
    return sorted(int(m.group(1)) for m in found if m)


def read_current(root: DataRoot, name: str) -> int | None:
    path = root.join(MODELS_DIR, name, CURRENT_FILE)
    data = _read_bytes(root, path)
    if data is None:
        return None
    text = data.decode("utf-8", "replace").strip()
    if (
        not (text.isascii() and text.isdigit()) or len(text) > 9 or int(text) < 1
    ):  # a version folder has at most 9 digits
        raise CoworkEnvError(f"{root.url_of(path)}: holds {text[:40]!r}, not a version number")
    return int(text)


def read_entry(root: DataRoot, name: str, version: int, current: int | None) -> ModelEntry:
    """The entry of `name` version `version`. CURRENT is the truth about which version is current: an entry whose
    promotion was cut short before CURRENT moved reads as the candidate it still is."""
    folder = root.join(MODELS_DIR, name, version_dir(version))
    path = root.join(MODELS_DIR, name, version_dir(version), ENTRY_FILE)
    data = _read_bytes(root, path)
    if data is None:
        raise CoworkEnvError(f"{root.url_of(folder)}: a registry version without {ENTRY_FILE}")
    try:
        fields = parse_json(data.decode("utf-8", "replace"), root.url_of(path))
        entry = ModelEntry.model_validate(
            {**fields, "path": root.url_of(folder)} if isinstance(fields, dict) else fields
        )
    except ValidationError as exc:
        raise CoworkEnvError(format_validation_error(exc, root.url_of(path))) from None
    if (entry.name, entry.version) != (name, version):
        raise CoworkEnvError(f"{root.url_of(path)}: names {entry.ref}, not {name}:v{version}")
    status = "current" if version == current else "candidate" if entry.status == "current" else entry.status
    return entry if status == entry.status else entry.model_copy(update={"status": status})


def read_decisions(root: DataRoot, name: str) -> list[dict[str, Any]]:
    path = root.join(MODELS_DIR, name, DECISIONS_FILE)
    data = _read_bytes(root, path)
    if data is None:
        return []
    lines = data.decode("utf-8", "replace").splitlines()
    return [parse_json(line, f"{root.url_of(path)}:{i}") for i, line in enumerate(lines, 1) if line.strip()]


# --- writing (local roots) --------------------------------------------------------------------------------------


@contextmanager
def locked(root: DataRoot, name: str) -> Iterator[Path]:
    """The name's folder, held by one writer at a time (registering and promoting read, then write)."""
    folder = writable(root) / check_name(name)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(folder / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise CoworkEnvError(f"{folder}: cannot write the registry: {exc.strerror or exc}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield folder
    finally:
        os.close(fd)  # closing releases the lock


def entry_json(entry: ModelEntry) -> str:
    """entry.json: the entry but its path, which is wherever the folder is (a data root can move)."""
    return json.dumps(entry.model_dump(mode="json", exclude={"path"}), indent=2, ensure_ascii=False) + "\n"


def _write_durably(dest: Path, text: str) -> None:
    """Written whole under a temporary name, flushed to disk, renamed over `dest`: readers see the old or the new."""
    with staged(dest) as tmp, open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    fsync_dir(dest.parent)


def write_entry(folder: Path, entry: ModelEntry) -> None:
    """Rewrite a registered version's entry.json (`folder`: the name's folder)."""
    _write_durably(folder / version_dir(entry.version) / ENTRY_FILE, entry_json(entry))


def write_current(folder: Path, version: int) -> None:
    _write_durably(folder / CURRENT_FILE, f"{version}\n")


def append_decision(folder: Path, line: str) -> None:
    """One line at the end of decisions.jsonl, on disk before returning (the writer holds the name's lock)."""
    with open(folder / DECISIONS_FILE, "a", encoding="utf-8") as f:
        f.write(line.rstrip("\n") + "\n")
        f.flush()
        os.fsync(f.fileno())
