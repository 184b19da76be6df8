"""Atomic, versioned dataset releases (DESIGN §7, contract).

```
<data root>/releases/<release_id>/manifest.json
<data root>/releases/<release_id>/<table>/[<key>=<value>/]part-<n>.parquet
<data root>/releases/LATEST                 the id of the newest complete release
```

- **Release id**: a pure function of the run id (`release_id_for`): `r-<slug of the run id>-<first 8 hex of
  sha256(run id)>`. A rerun of the same run id targets the same release; publishing identical tables again is
  a no-op (the stored manifest is returned), different tables raise `ReleaseConflict`.
- **Local filesystems** (plain paths, `file://`): the release is written under `releases/.tmp-<id>-<time>-<nonce>/`,
  every file and directory is fsynced, the directory is renamed to `releases/<id>/` (atomic), then `LATEST` is
  replaced atomically (temporary file, fsync, rename). A crash at any point leaves the previous `LATEST` and no
  partially written release under a final name.
- **Other fsspec filesystems** (`s3://`, `gs://`, `memory://`, …) have no atomic directory rename: the release is
  written under its final name with `manifest.json` written **last**, then `LATEST` is overwritten (a single-object
  put, atomic on object stores). A directory without `manifest.json` is an incomplete release: readers ignore it and
  the next publish of that run id replaces it. `LATEST` only ever names complete releases.
- Temporary directories older than a day are removed on publish.

`COWORKENV_RELEASE_FAULT=<stage>:exit|pause` (testing only) stops the writer at a stage: `exit` leaves the process
at once, `pause` announces the stage (on stderr, and in the file named by `COWORKENV_RELEASE_FAULT_MARKER`) and
sleeps until killed. Stages: `tmp_created`, `table:<name>` (after each table), `tables_written`,
`manifest_written`, `visible` (release complete under its final name, `LATEST` not yet changed),
`latest_temp_written` (local only), `published`.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pydantic import BaseModel, ConfigDict, ValidationError, field_serializer

from coworkenv.data.schemas import PARTITIONS, TABLES, fingerprint
from coworkenv.errors import CoworkEnvError, format_validation_error

RELEASES_DIR = "releases"
LATEST_FILE = "LATEST"
MANIFEST_FILE = "manifest.json"
TMP_PREFIX = ".tmp-"
STALE_TMP_SECONDS = 24 * 3600
FORMAT_VERSION = 1
ROW_GROUP_SIZE = 128 * 1024
"""Rows per Parquet row group: the unit DuckDB and pyarrow skip using min/max statistics."""
MAX_ROWS_PER_FILE = 1_000_000
"""A partition with more rows is split into `part-0`, `part-1`, … files (readers scan them in parallel)."""
DATA_ROOT_ENV = "COWORKENV_DATA_ROOT"
CODE_VERSION_ENV = "COWORKENV_CODE_VERSION"
FAULT_ENV = "COWORKENV_RELEASE_FAULT"
FAULT_MARKER_ENV = "COWORKENV_RELEASE_FAULT_MARKER"

_RELEASE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$")


class ReleaseConflict(CoworkEnvError):
    """The run id's release exists with different table contents."""


class FileEntry(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    path: str
    """Relative to the release directory, e.g. `tasks/family=mail_triage/part-0.parquet`."""
    rows: int
    bytes: int
    sha256: str


class Manifest(BaseModel):
    """`manifest.json`: what a release holds and where it came from."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    format_version: int = FORMAT_VERSION
    release_id: str
    run_id: str
    parent: str | None
    created_at: datetime
    code_version: str
    """`coworkenv.__version__` plus `+g<git commit>[.dirty]` when the code runs from a git checkout."""
    config: dict[str, Any]
    row_counts: dict[str, int]
    schema_fingerprints: dict[str, str]
    content_hashes: dict[str, str] = {}
    """Per table: sha256 over its files' relative paths and sha256s, in order."""
    files: dict[str, list[FileEntry]] = {}
    """Per table: its Parquet files, in read order."""

    @field_serializer("created_at")
    def _utc_text(self, value: datetime) -> str:
        """Always `YYYY-MM-DDTHH:MM:SS.ffffffZ`, so that manifests sort by time as text too."""
        return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


# --------------------------------------------------------------------------------------------- filesystems


@dataclass(frozen=True)
class DataRoot:
    """A data root resolved through fsspec: the filesystem and the protocol-less root path."""

    fs: Any
    path: str
    url: str

    @property
    def local(self) -> bool:
        from fsspec.implementations.local import LocalFileSystem

        return isinstance(self.fs, LocalFileSystem)

    def join(self, *parts: str) -> str:
        return "/".join([self.path.rstrip("/"), *parts])

    def url_of(self, path: str) -> str:
        """A path as other tools (DuckDB, datasets, pandas) take it: plain for local files, a URL otherwise."""
        return path if self.local else self.fs.unstrip_protocol(path)

    @property
    def releases(self) -> str:
        return self.join(RELEASES_DIR)


def default_data_root() -> str:
    return os.environ.get(DATA_ROOT_ENV) or "./data"


def open_root(data_root: str | os.PathLike[str] | DataRoot | None = None) -> DataRoot:
    """Resolve a data root: a local path, a `file://` URL or any fsspec URL (`s3://bucket/prefix`, `memory://x`)."""
    if isinstance(data_root, DataRoot):
        return data_root
    import fsspec

    url = os.fspath(data_root) if data_root is not None else default_data_root()
    if not url:
        raise CoworkEnvError("the data root is empty")
    try:
        fs, path = fsspec.core.url_to_fs(url)
    except (ImportError, ValueError) as exc:
        raise CoworkEnvError(f"data root {url!r}: {exc}") from None
    return DataRoot(fs=fs, path=path.rstrip("/") or "/", url=url)


def _is_missing(exc: BaseException) -> bool:
    return isinstance(exc, FileNotFoundError)


def _write_bytes(root: DataRoot, path: str, data: bytes | memoryview) -> None:
    """Write a whole file; on local disks flush it to stable storage before returning."""
    if root.local:
        with open(path, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
    else:
        root.fs.pipe_file(path, bytes(data))


def _fsync_dir(path: str) -> None:
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


def _fsync_tree(path: str) -> None:
    for dirpath, _dirs, _files in os.walk(path, topdown=False):
        _fsync_dir(dirpath)


def _makedirs(root: DataRoot, path: str) -> None:
    root.fs.makedirs(path, exist_ok=True)


# --------------------------------------------------------------------------------------------- fault injection


def _checkpoint(stage: str) -> None:
    """Testing hook (see the module doc): stop the writer at `stage` when COWORKENV_RELEASE_FAULT asks for it."""
    want = os.environ.get(FAULT_ENV)
    if not want:
        return
    name, _, action = want.rpartition(":") if want.endswith((":exit", ":pause")) else (want, "", "exit")
    if name != stage:
        return
    if action == "exit":
        os._exit(86)
    marker = os.environ.get(FAULT_MARKER_ENV)
    if marker:  # written whole, then renamed: a watcher never sees it half-written
        Path(marker + ".tmp").write_text(stage, encoding="utf-8")
        os.replace(marker + ".tmp", marker)
    sys.stderr.write(f"release writer paused at {stage}\n")
    sys.stderr.flush()
    while True:
        time.sleep(3600)


# --------------------------------------------------------------------------------------------- ids and versions


def release_id_for(run_id: str) -> str:
    """`r-<slug>-<hash8>`: readable, filesystem-safe and a pure function of the run id."""
    if not isinstance(run_id, str) or not run_id.strip():
        raise CoworkEnvError("a release needs a non-empty run id")
    slug = re.sub(r"[^a-z0-9]+", "-", run_id.lower()).strip("-")[:48].strip("-")
    digest = hashlib.sha256(run_id.encode("utf-8")).hexdigest()[:8]
    return f"r-{slug}-{digest}" if slug else f"r-{digest}"


@lru_cache(maxsize=1)
def code_version() -> str:
    """`<version>[+g<commit>[.dirty]]`, without paths; the commit only when the package runs from a git checkout.

    `COWORKENV_CODE_VERSION` overrides it (e.g. set at image build time, where there is no git)."""
    import coworkenv

    override = os.environ.get(CODE_VERSION_ENV)
    if override:
        return override

    version = coworkenv.__version__
    package = Path(coworkenv.__file__).resolve().parent

    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(["git", *args], cwd=package, capture_output=True, text=True, timeout=10, check=False)
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    top = git("rev-parse", "--show-toplevel")
    if not top or Path(top).resolve() / "coworkenv" != package:
        return version
    commit = git("rev-parse", "--short=12", "HEAD")
    if not commit:
        return version
    dirty = git("status", "--porcelain", "--untracked-files=no")
    return f"{version}+g{commit}{'.dirty' if dirty else ''}"


def _now() -> datetime:
    return datetime.now(UTC)


# --------------------------------------------------------------------------------------------- schemas


def conform_table(name: str, table: pa.Table | pa.RecordBatch | None) -> pa.Table:
    """`table` with exactly the schema of `TABLES[name]`: columns reordered, types cast where the cast is safe
    (no overflow, no truncation), the canonical field metadata attached; a clear error otherwise."""
    if name not in TABLES:
        raise CoworkEnvError(f"unknown table {name!r}; tables are: {', '.join(TABLES)}")
    schema = TABLES[name]
    if table is None:
        return schema.empty_table()
    if isinstance(table, pa.RecordBatch):
        table = pa.Table.from_batches([table])
    if not isinstance(table, pa.Table):
        raise CoworkEnvError(f"table {name}: expected a pyarrow.Table, got {type(table).__name__}")
    names = table.column_names
    dupes = sorted({n for n in names if names.count(n) > 1})
    missing = [f.name for f in schema if f.name not in names]
    extra = [n for n in names if n not in schema.names]
    if dupes or missing or extra:
        problems = [f"{what} {', '.join(cols)}" for what, cols in (("missing columns", missing), ("unknown columns", extra),
                                                                 ("duplicate columns", dupes)) if cols]  # fmt: skip
        raise CoworkEnvError(f"table {name}: {'; '.join(problems)}")
    columns = []
    for field in schema:
        column = table.column(field.name)
        if not column.type.equals(field.type):
            try:
                column = column.cast(field.type, safe=True)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
                reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                raise CoworkEnvError(f"table {name}, column {field.name}: cannot convert {column.type} to {field.type}: {reason}") from None
        if not field.nullable and column.null_count:
            raise CoworkEnvError(f"table {name}, column {field.name}: {column.null_count} null value(s) in a non-nullable column")
        columns.append(column)
    return pa.Table.from_arrays(columns, schema=schema)


def _restore_schema(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """Files read back name list items `element`; give the table the canonical schema (with field docs) again."""
    return table.cast(schema) if not table.schema.equals(schema, check_metadata=True) else table


# --------------------------------------------------------------------------------------------- writing


@dataclass(frozen=True)
class _File:
    path: str
    data: memoryview
    rows: int

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()


def _parquet_bytes(table: pa.Table) -> memoryview:
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="zstd", row_group_size=ROW_GROUP_SIZE, write_statistics=True)
    return memoryview(sink.getvalue())


def _partition_dir(keys: list[str], values: tuple[Any, ...], table: str) -> str:
    parts = []
    for key, value in zip(keys, values, strict=True):
        if value is None or value == "":
            raise CoworkEnvError(f"table {table}: partition column {key} is empty")
        parts.append(f"{key}={quote(str(value), safe='')}")
    return "/".join(parts)


def _groups(name: str, table: pa.Table) -> Iterator[tuple[str, pa.Table]]:
    """(relative directory, rows) per partition: partitions in ascending key order, row order kept within each."""
    keys = PARTITIONS.get(name, [])
    if not keys or table.num_rows == 0:
        yield "", table
        return
    ordered = table.take(pc.sort_indices(table, sort_keys=[(k, "ascending") for k in keys]))  # a stable sort
    values = list(zip(*(ordered.column(k).to_pylist() for k in keys), strict=True))
    start = 0
    for i in range(1, len(values) + 1):
        if i == len(values) or values[i] != values[start]:
            yield _partition_dir(keys, values[start], name), ordered.slice(start, i - start)
            start = i


def _serialize(name: str, table: pa.Table) -> Iterator[_File]:
    """The table's Parquet files, in read order; deterministic for the same table and pyarrow version."""
    for directory, rows in _groups(name, table):
        prefix = f"{name}/{directory}/" if directory else f"{name}/"
        n_files = max(1, -(-rows.num_rows // MAX_ROWS_PER_FILE))
        for part in range(n_files):
            chunk = rows.slice(part * MAX_ROWS_PER_FILE, MAX_ROWS_PER_FILE)
            yield _File(f"{prefix}part-{part}.parquet", _parquet_bytes(chunk), chunk.num_rows)


def _content_hash(entries: list[FileEntry]) -> str:
    text = "".join(f"{e.path}\0{e.sha256}\n" for e in entries)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _write_tables(root: DataRoot, target: str, tables: Mapping[str, pa.Table]) -> dict[str, list[FileEntry]]:
    written: dict[str, list[FileEntry]] = {}
    for name, table in tables.items():
        entries = []
        for file in _serialize(name, table):
            path = f"{target}/{file.path}"
            _makedirs(root, path.rsplit("/", 1)[0])
            _write_bytes(root, path, file.data)
            entries.append(FileEntry(path=file.path, rows=file.rows, bytes=len(file.data), sha256=file.sha256))
        written[name] = entries
        _checkpoint(f"table:{name}")
    return written


def _json_config(config: Mapping[str, Any] | None) -> dict[str, Any]:
    try:
        return json.loads(json.dumps(dict(config or {}), sort_keys=True, allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise CoworkEnvError(f"release config must be JSON-serializable: {exc}") from None


def _stale_tmp(name: str, now: float) -> bool:
    match = re.search(r"-(\d{9,})-[0-9a-f]+$", name)
    return bool(match) and now - int(match.group(1)) > STALE_TMP_SECONDS


def clean_stale_tmp(data_root: str | DataRoot) -> list[str]:
    """Remove temporary release directories and `LATEST` temporaries left by writers that died over a day ago."""
    root = open_root(data_root)
    removed = []
    try:
        entries = root.fs.ls(root.releases, detail=False)
    except FileNotFoundError:
        return removed
    now = time.time()
    for entry in entries:
        name = entry.rstrip("/").rsplit("/", 1)[-1]
        if name.startswith(TMP_PREFIX) and _stale_tmp(name, now):
            try:
                root.fs.rm(entry, recursive=True)
                removed.append(name)
            except FileNotFoundError:  # another publisher cleaned it first
                pass
    return removed


def _tmp_name(what: str) -> str:
    return f"{TMP_PREFIX}{what}-{int(time.time())}-{secrets.token_hex(4)}"


def _set_latest(root: DataRoot, release_id: str) -> None:
    target = root.join(RELEASES_DIR, LATEST_FILE)
    data = f"{release_id}\n".encode()
    if not root.local:
        root.fs.pipe_file(target, data)  # one object put: atomic on object stores
        return
    tmp = root.join(RELEASES_DIR, _tmp_name("LATEST"))
    _write_bytes(root, tmp, data)
    _checkpoint("latest_temp_written")
    os.replace(tmp, target)
    _fsync_dir(root.releases)


def publish_release(
    tables: Mapping[str, pa.Table | None],
    *,
    data_root: str | os.PathLike[str] | DataRoot | None = None,
    run_id: str,
    parent: str | None,
    config: Mapping[str, Any] | None,
) -> Manifest:
    """Publish the tables as release `release_id_for(run_id)` and point `LATEST` at it.

    Tables absent from `tables` (or None) are written empty. Every table is checked against its schema first;
    nothing is written if one does not fit. Publishing a run id whose release already exists returns the stored
    manifest if the tables are identical (moving `LATEST` to it unless a newer release is there) and raises
    `ReleaseConflict` otherwise.
    """
    root = open_root(data_root)
    release_id = release_id_for(run_id)
    unknown = sorted(set(tables) - set(TABLES))
    if unknown:
        raise CoworkEnvError(f"unknown table(s) {', '.join(unknown)}; tables are: {', '.join(TABLES)}")
    conformed = {name: conform_table(name, tables.get(name)) for name in TABLES}
    config_json = _json_config(config)
    _makedirs(root, root.releases)
    clean_stale_tmp(root)

    existing = _complete_manifest(root, release_id)
    if existing is not None:
        return _republish(root, existing, conformed)

    final = root.join(RELEASES_DIR, release_id)
    if root.local:
        target = root.join(RELEASES_DIR, _tmp_name(release_id))
        _makedirs(root, target)
        _checkpoint("tmp_created")
    else:
        target = final
        if root.fs.exists(final):  # an incomplete release left by a writer that died: ours to replace
            root.fs.rm(final, recursive=True)
        _makedirs(root, target)
    try:
        files = _write_tables(root, target, conformed)
        _checkpoint("tables_written")
        manifest = Manifest(
            release_id=release_id, run_id=run_id, parent=parent, created_at=_now(), code_version=code_version(),
            config=config_json, row_counts={n: t.num_rows for n, t in conformed.items()},
            schema_fingerprints={n: fingerprint(TABLES[n]) for n in TABLES},
            content_hashes={n: _content_hash(e) for n, e in files.items()}, files=files,
        )  # fmt: skip
        _write_bytes(root, f"{target}/{MANIFEST_FILE}", manifest.model_dump_json(indent=2).encode("utf-8") + b"\n")
        _checkpoint("manifest_written")
        if root.local:
            _fsync_tree(target)
            try:
                os.rename(target, final)
            except OSError:
                # Another writer published this run id first: identical → no-op, else a conflict.
                other = _complete_manifest(root, release_id)
                if other is None:
                    raise CoworkEnvError(f"{final} exists but is not a complete release (no {MANIFEST_FILE}): remove it and publish again") from None
                root.fs.rm(target, recursive=True)
                return _republish(root, other, conformed)
            _fsync_dir(root.releases)
    except BaseException:
        if root.local and root.fs.exists(target) and target != final:
            root.fs.rm(target, recursive=True)
        raise
    _checkpoint("visible")
    _set_latest(root, release_id)
    _checkpoint("published")
    return manifest


def _complete_manifest(root: DataRoot, release_id: str) -> Manifest | None:
    path = root.join(RELEASES_DIR, release_id, MANIFEST_FILE)
    try:
        data = root.fs.cat_file(path)
    except FileNotFoundError:
        return None
    try:
        return Manifest.model_validate_json(data)
    except ValidationError as exc:
        raise CoworkEnvError(format_validation_error(exc, f"{root.url_of(path)}: unreadable manifest")) from None


def _republish(root: DataRoot, existing: Manifest, tables: Mapping[str, pa.Table]) -> Manifest:
    """The release exists: check that the tables are the same, then make sure `LATEST` has caught up."""
    differ = []
    for name, table in tables.items():
        entries = [FileEntry(path=f.path, rows=f.rows, bytes=len(f.data), sha256=f.sha256) for f in _serialize(name, table)]
        if existing.content_hashes.get(name) == _content_hash(entries):
            continue
        # Parquet bytes also depend on the pyarrow version: compare the rows themselves before calling it a conflict.
        if existing.row_counts.get(name) != table.num_rows or not _stored_equals(root, existing, name, table):
            differ.append(name)
    if differ:
        raise ReleaseConflict(
            f"release {existing.release_id} (run {existing.run_id!r}) already exists with different rows in "
            f"{', '.join(differ)}: a rerun of a run id must produce the same tables (use a new run id for new data)"
        )
    current = latest_release(root)
    if current != existing.release_id:
        newer = _complete_manifest(root, current) if current else None
        if newer is None or newer.created_at <= existing.created_at:
            _set_latest(root, existing.release_id)
    return existing


def _stored_equals(root: DataRoot, manifest: Manifest, name: str, table: pa.Table) -> bool:
    ordered = pa.concat_tables([rows for _dir, rows in _groups(name, table)]) if table.num_rows else table
    try:
        stored = _read(root, manifest, name)
    except (OSError, pa.ArrowException):
        return False
    return stored.equals(ordered)


# --------------------------------------------------------------------------------------------- reading


def latest_release(data_root: str | os.PathLike[str] | DataRoot | None = None) -> str | None:
    """The id `LATEST` names, or None before the first release."""
    root = open_root(data_root)
    try:
        text = root.fs.cat_file(root.join(RELEASES_DIR, LATEST_FILE)).decode("utf-8").strip()
    except FileNotFoundError:
        return None
    return text or None


def list_releases(data_root: str | os.PathLike[str] | DataRoot | None = None) -> list[Manifest]:
    """Every complete release (one with a manifest), oldest first; temporary and incomplete ones are skipped."""
    root = open_root(data_root)
    try:
        entries = root.fs.ls(root.releases, detail=True)
    except FileNotFoundError:
        return []
    manifests = []
    for entry in entries:
        name = entry["name"].rstrip("/").rsplit("/", 1)[-1]
        if entry.get("type") != "directory" or not _RELEASE_NAME.match(name):
            continue
        try:
            manifest = _complete_manifest(root, name)
        except CoworkEnvError:  # a damaged manifest: not a usable release (read_manifest names the problem)
            continue
        if manifest is not None:
            manifests.append(manifest)
    return sorted(manifests, key=lambda m: (m.created_at, m.release_id))


def resolve_release(data_root: str | os.PathLike[str] | DataRoot | None, release: str) -> str:
    """A release id, with `latest` meaning the one `LATEST` names."""
    root = open_root(data_root)
    if release.lower() == "latest":
        current = latest_release(root)
        if current is None:
            raise CoworkEnvError(f"no release published under {root.url} yet")
        return current
    if not _RELEASE_NAME.match(release):
        raise CoworkEnvError(f"invalid release id {release!r}")
    return release


def read_manifest(data_root: str | os.PathLike[str] | DataRoot | None, release: str = "latest") -> Manifest:
    root = open_root(data_root)
    release_id = resolve_release(root, release)
    manifest = _complete_manifest(root, release_id)
    if manifest is None:
        known = [m.release_id for m in list_releases(root)][-5:]
        hint = f" (latest releases: {', '.join(known)})" if known else ""
        raise CoworkEnvError(f"no complete release {release_id!r} under {root.url}{hint}")
    return manifest


def release_path(data_root: str | os.PathLike[str] | DataRoot | None, release: str = "latest") -> str:
    """The release directory as a path (local) or URL (other filesystems)."""
    root = open_root(data_root)
    return root.url_of(root.join(RELEASES_DIR, resolve_release(root, release)))


def table_path(data_root: str | os.PathLike[str] | DataRoot | None, release: str, table: str) -> str:
    """The table's directory as a path (local) or URL: `read_parquet('<it>/**/*.parquet', hive_partitioning=true)`."""
    if table not in TABLES:
        raise CoworkEnvError(f"unknown table {table!r}; tables are: {', '.join(TABLES)}")
    root = open_root(data_root)
    return root.url_of(root.join(RELEASES_DIR, resolve_release(root, release), table))


def _table_files(root: DataRoot, manifest: Manifest, table: str) -> list[str]:
    base = root.join(RELEASES_DIR, manifest.release_id)
    if table in manifest.files:
        return [f"{base}/{e.path}" for e in manifest.files[table]]
    found = root.fs.find(f"{base}/{table}")
    return sorted(p for p in found if p.endswith(".parquet"))


def table_files(data_root: str | os.PathLike[str] | DataRoot | None, release: str, table: str) -> list[str]:
    """The table's Parquet files in read order, as paths or URLs (e.g. `datasets.load_dataset("parquet", data_files=…)`)."""
    if table not in TABLES:
        raise CoworkEnvError(f"unknown table {table!r}; tables are: {', '.join(TABLES)}")
    root = open_root(data_root)
    manifest = read_manifest(root, release)
    return [root.url_of(p) for p in _table_files(root, manifest, table)]


def _arrow_fs(root: DataRoot) -> Any:
    if root.local:
        import pyarrow.fs as pafs

        return pafs.LocalFileSystem()
    return root.fs


def _read(root: DataRoot, manifest: Manifest, table: str, columns: list[str] | None = None, filters: Any = None) -> pa.Table:
    schema = TABLES[table]
    current = manifest.schema_fingerprints.get(table) == fingerprint(schema)
    fs = _arrow_fs(root)
    parts = [pq.read_table(p, filesystem=fs, columns=columns, filters=filters, partitioning=None) for p in _table_files(root, manifest, table)]
    if not parts:
        raise CoworkEnvError(f"release {manifest.release_id}: table {table} has no files")
    result = pa.concat_tables(parts) if len(parts) > 1 else parts[0]
    if current:
        target = schema if columns is None else pa.schema([schema.field(c) for c in columns])
        result = _restore_schema(result, target)
    return result


def read_table(
    data_root: str | os.PathLike[str] | DataRoot | None,
    release: str,
    table: str,
    *,
    columns: list[str] | None = None,
    filters: Any = None,
) -> pa.Table:
    """A table of a release (`latest` allowed) with its canonical schema.

    Rows of partitioned tables come grouped by partition (ascending key), in publication order within one.
    `filters` is a pyarrow expression or DNF list (`[("family", "=", "mail_triage")]`); row groups whose statistics
    rule it out are skipped. A release written under an older schema comes back with its stored schema.
    """
    if table not in TABLES:
        raise CoworkEnvError(f"unknown table {table!r}; tables are: {', '.join(TABLES)}")
    root = open_root(data_root)
    return _read(root, read_manifest(root, release), table, columns, filters)


def read_release(data_root: str | os.PathLike[str] | DataRoot | None, release: str = "latest") -> dict[str, pa.Table]:
    """Every table of a release, e.g. to carry a parent's tables forward into a new release."""
    root = open_root(data_root)
    manifest = read_manifest(root, release)
    return {name: _read(root, manifest, name) for name in TABLES}


def verify_release(data_root: str | os.PathLike[str] | DataRoot | None, release: str = "latest") -> list[str]:
    """Problems found re-hashing every file against the manifest (empty: intact)."""
    root = open_root(data_root)
    manifest = read_manifest(root, release)
    base = root.join(RELEASES_DIR, manifest.release_id)
    problems = []
    for table, entries in manifest.files.items():
        for entry in entries:
            try:
                data = root.fs.cat_file(f"{base}/{entry.path}")
            except FileNotFoundError:
                problems.append(f"{entry.path}: missing")
                continue
            if hashlib.sha256(data).hexdigest() != entry.sha256:
                problems.append(f"{entry.path}: content differs from the manifest")
        if manifest.content_hashes.get(table) not in (None, _content_hash(entries)):
            problems.append(f"{table}: content hash differs from the file list")
    return problems
