"""A release checked against its manifest before it is read (docs/datasets.md, "Integrity on read").

Every read path checks what it reads: every file the manifest lists for the tables it reads is present with the
listed size and the listed SHA-256, no unlisted Parquet part sits in a table's folder, each file's row count in its
Parquet footer equals the listed one, and the files add up to the manifest's `row_counts`. The manifest itself is
strict (`Manifest`): a missing or unknown key, or content hashes that are not those of the file list, make it unreadable.

Hashing costs a read of each file (about 400 MiB/s on 2 shared cores). On a local data root a file once hashed is
remembered by its size, modification time and inode under `<root>/.verified/<release id>.json`, so the next read
of an unchanged file costs one `stat`; `fresh=True` (`sql --verify`, `export`, `verify_release`) hashes every byte
again. Anyone who can rewrite a file and reset its modification time can get past the memory, not past `--verify`.

The first problem found is raised as a one-line `CoworkEnvError` naming the file.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from coworkenv.data.batches import UNREADABLE
from coworkenv.data.layout import MANIFEST_FILE, FileEntry, Manifest
from coworkenv.data.root import RELEASES_DIR, DataRoot
from coworkenv.errors import CoworkEnvError, first_line

HASH_CHUNK = 8 * 1024 * 1024


def arrow_fs(root: DataRoot) -> Any:
    """The filesystem pyarrow reads the root's files through."""
    if root.local:
        import pyarrow.fs as pafs

        return pafs.LocalFileSystem()
    return root.fs


def table_files(root: DataRoot, manifest: Manifest, table: str) -> list[str]:
    """The table's files in read order, as the manifest lists them."""
    base = root.join(RELEASES_DIR, manifest.release_id)
    return [f"{base}/{e.path}" for e in manifest.files.get(table, [])]


def _found_parts(root: DataRoot, folder: str) -> list[str]:
    try:
        found = root.fs.find(folder)
    except (FileNotFoundError, NotADirectoryError):
        return []
    return sorted(p for p in found if p.endswith(".parquet"))


def _sha256(root: DataRoot, path: str) -> str:
    digest = hashlib.sha256()
    with root.fs.open(path, "rb") as f:
        while chunk := f.read(HASH_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _footer_rows(root: DataRoot, path: str) -> int:
    try:
        return pq.read_metadata(path, filesystem=arrow_fs(root)).num_rows
    except UNREADABLE as exc:
        raise _Problem(f"unreadable Parquet footer ({first_line(exc)})") from None


class _Problem(Exception):
    pass


VERIFIED_DIR = ".verified"


class _Verified:
    """The files of one release whose SHA-256 matched, keyed by what `stat` says of them (local roots only)."""

    def __init__(self, root: DataRoot, release_id: str, fresh: bool) -> None:
        self.path = Path(root.path) / VERIFIED_DIR / f"{release_id}.json" if root.local else None
        self.known: dict[str, list[int]] = {}
        self.changed = False
        if self.path is not None and not fresh:
            try:
                data = json.loads(self.path.read_text(encoding="utf-8"))
                self.known = {k: v for k, v in data.items() if isinstance(v, list)} if isinstance(data, dict) else {}
            except (OSError, ValueError):
                self.known = {}

    @staticmethod
    def _stamp(path: str) -> list[int]:
        st = os.stat(path)
        return [st.st_size, st.st_mtime_ns, st.st_ino]

    def matches(self, root: DataRoot, path: str, entry: FileEntry) -> bool:
        key = f"{entry.path} {entry.sha256}"
        stamp = self._stamp(path) if self.path is not None else None
        if stamp is not None and self.known.get(key) == stamp:
            return True
        if _sha256(root, path) != entry.sha256:
            return False
        if stamp is not None:
            self.known[key] = stamp
            self.changed = True
        return True

    def save(self) -> None:
        if self.path is None or not self.changed:
            return
        try:  # best effort: a read-only data root is read, hashing each time
            self.path.parent.mkdir(exist_ok=True)
            tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}")
            tmp.write_text(json.dumps(self.known), encoding="utf-8")
            os.replace(tmp, self.path)
        except OSError:
            pass


def _entry_problem(root: DataRoot, path: str, entry: FileEntry, verified: _Verified) -> str | None:
    try:
        size = root.fs.size(path)
    except (FileNotFoundError, NotADirectoryError):
        return "missing"
    except IsADirectoryError:
        return "is a directory, not a Parquet file"
    if size != entry.bytes:
        return f"{size} bytes, the manifest lists {entry.bytes}"
    if not verified.matches(root, path, entry):
        return "content differs from the manifest"
    try:
        rows = _footer_rows(root, path)
    except _Problem as problem:
        return str(problem)
    if rows != entry.rows:
        return f"{rows} rows in its Parquet footer, the manifest lists {entry.rows}"
    return None


def table_problems(root: DataRoot, manifest: Manifest, table: str, verified: _Verified) -> list[str]:
    """What is wrong with one table's files (empty: intact), each naming the file relative to the release."""
    base = root.join(RELEASES_DIR, manifest.release_id)
    entries = manifest.files.get(table, [])
    problems: list[str] = []
    for entry in entries:
        problem = _entry_problem(root, f"{base}/{entry.path}", entry, verified)
        if problem:
            problems.append(f"{entry.path}: {problem}")
    listed = {f"{base}/{e.path}" for e in entries}
    problems += [
        f"{p[len(base) + 1 :]}: not listed in {MANIFEST_FILE}"
        for p in _found_parts(root, f"{base}/{table}")
        if p not in listed
    ]
    expected = manifest.row_counts.get(table)
    if expected is not None and sum(e.rows for e in entries) != expected:
        problems.append(
            f"{table}: its files list {sum(e.rows for e in entries)} rows, the manifest's row_counts {expected}"
        )
    return problems


def release_problems(
    root: DataRoot, manifest: Manifest, tables: list[str] | None = None, *, fresh: bool = False
) -> list[str]:
    """What is wrong with the release's files (empty: intact); `tables`: only these (default: every listed table);
    `fresh`: hash every file, even those verified before."""
    verified = _Verified(root, manifest.release_id, fresh)
    names = tables if tables is not None else sorted(manifest.files)
    problems = [problem for name in names for problem in table_problems(root, manifest, name, verified)]
    verified.save()
    return problems


def check_release(root: DataRoot, manifest: Manifest, tables: list[str] | None = None, *, fresh: bool = False) -> None:
    """Raise a one-line `CoworkEnvError` naming the first damaged file; return quietly if the release is intact."""
    problems = release_problems(root, manifest, tables, fresh=fresh)
    if problems:
        more = f" (and {len(problems) - 1} more problem{'s' if len(problems) > 2 else ''})" if len(problems) > 1 else ""
        where = root.url_of(root.join(RELEASES_DIR, manifest.release_id))
        raise CoworkEnvError(f"damaged release {manifest.release_id}: {where}/{problems[0]}{more}; refusing to read it")
