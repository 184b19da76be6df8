"""A release checked against its manifest before it is read (docs/datasets.md, "Integrity on read").

Two depths:
- **cheap** (every read by `sql`, `export`, the SQL catalog and `read_table`): every file the manifest lists is
  present with the listed size, no unlisted Parquet part sits in a table's folder, each file's row count in its
  Parquet footer equals the listed one, and the files add up to the manifest's `row_counts`. It costs one `stat`
  and one footer read per file, whatever the release's size.
- **full** (`sql --verify`, `export`, `verify_release`): the above plus the SHA-256 of every byte. It costs a read of
  the whole release, which an export does anyway but a query over a few columns of one partition does not.

The first problem found is raised as a one-line `CoworkEnvError` naming the file.
"""

from __future__ import annotations

import hashlib
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from coworkenv.data.layout import MANIFEST_FILE, FileEntry, Manifest, content_hash_of
from coworkenv.data.root import RELEASES_DIR, DataRoot
from coworkenv.errors import CoworkEnvError

HASH_CHUNK = 8 * 1024 * 1024


def arrow_fs(root: DataRoot) -> Any:
    """The filesystem pyarrow reads the root's files through."""
    if root.local:
        import pyarrow.fs as pafs

        return pafs.LocalFileSystem()
    return root.fs


def listed_entries(manifest: Manifest, table: str) -> list[FileEntry] | None:
    """The manifest's files of `table`, or None for a manifest that predates the file list."""
    return manifest.files.get(table) if manifest.files else None


def table_files(root: DataRoot, manifest: Manifest, table: str) -> list[str]:
    """The table's files in read order: the manifest's list (a manifest without one: the folder's Parquet files)."""
    base = root.join(RELEASES_DIR, manifest.release_id)
    entries = listed_entries(manifest, table)
    if entries is not None:
        return [f"{base}/{e.path}" for e in entries]
    return _found_parts(root, f"{base}/{table}")


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
    except (OSError, pa.ArrowException) as exc:
        raise _Problem(f"unreadable Parquet footer ({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})") from None


class _Problem(Exception):
    pass


def _entry_problem(root: DataRoot, path: str, entry: FileEntry, full: bool) -> str | None:
    try:
        size = root.fs.size(path)
    except (FileNotFoundError, NotADirectoryError):
        return "missing"
    except IsADirectoryError:
        return "is a directory, not a Parquet file"
    if size != entry.bytes:
        return f"{size} bytes, the manifest lists {entry.bytes}"
    if full and _sha256(root, path) != entry.sha256:
        return "content differs from the manifest"
    try:
        rows = _footer_rows(root, path)
    except _Problem as problem:
        return str(problem)
    if rows != entry.rows:
        return f"{rows} rows in its Parquet footer, the manifest lists {entry.rows}"
    return None


def table_problems(root: DataRoot, manifest: Manifest, table: str, *, full: bool = False) -> list[str]:
    """What is wrong with one table's files (empty: intact), each naming the file relative to the release."""
    base = root.join(RELEASES_DIR, manifest.release_id)
    entries = listed_entries(manifest, table)
    problems: list[str] = []
    if entries is None:  # an old manifest without a file list: only the row count can be checked
        total = 0
        for path in _found_parts(root, f"{base}/{table}"):
            try:
                total += _footer_rows(root, path)
            except _Problem as problem:
                problems.append(f"{path[len(base) + 1 :]}: {problem}")
        expected = manifest.row_counts.get(table)
        if not problems and expected is not None and total != expected:
            problems.append(f"{table}: {total} rows in its files, the manifest's row_counts lists {expected}")
        return problems
    for entry in entries:
        problem = _entry_problem(root, f"{base}/{entry.path}", entry, full)
        if problem:
            problems.append(f"{entry.path}: {problem}")
    listed = {f"{base}/{e.path}" for e in entries}
    problems += [f"{p[len(base) + 1 :]}: not listed in {MANIFEST_FILE}" for p in _found_parts(root, f"{base}/{table}") if p not in listed]
    expected = manifest.row_counts.get(table)
    if expected is not None and sum(e.rows for e in entries) != expected:
        problems.append(f"{table}: its files list {sum(e.rows for e in entries)} rows, the manifest's row_counts {expected}")
    if full and manifest.content_hashes.get(table) not in (None, content_hash_of(entries)):
        problems.append(f"{table}: content hash differs from the file list")
    return problems


def release_problems(root: DataRoot, manifest: Manifest, tables: list[str] | None = None, *, full: bool = False) -> list[str]:
    """What is wrong with the release's files (empty: intact); `tables`: only these (default: every listed table)."""
    names = tables if tables is not None else sorted(set(manifest.files) | set(manifest.row_counts))
    return [problem for name in names for problem in table_problems(root, manifest, name, full=full)]


def check_release(root: DataRoot, manifest: Manifest, tables: list[str] | None = None, *, full: bool = False) -> None:
    """Raise a one-line `CoworkEnvError` naming the first damaged file; return quietly if the release is intact."""
    problems = release_problems(root, manifest, tables, full=full)
    if problems:
        more = f" (and {len(problems) - 1} more problem{'s' if len(problems) > 2 else ''})" if len(problems) > 1 else ""
        where = root.url_of(root.join(RELEASES_DIR, manifest.release_id))
        raise CoworkEnvError(f"damaged release {manifest.release_id}: {where}/{problems[0]}{more}; refusing to read it")
