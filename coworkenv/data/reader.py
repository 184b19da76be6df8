"""Reading published releases: the one reader every consumer uses (CLI, SQL catalog, exports, docs, training).

Only complete releases (ones with a `manifest.json`) are ever read; `.tmp-*` directories are skipped.
"""

from __future__ import annotations

import hashlib
import os
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import ValidationError

from coworkenv.data.layout import LATEST_FILE, MANIFEST_FILE, RELEASE_NAME, Manifest, content_hash_of
from coworkenv.data.root import RELEASES_DIR, DataRoot, open_root
from coworkenv.data.schemas import TABLES, fingerprint
from coworkenv.errors import CoworkEnvError, format_validation_error

Root = str | os.PathLike[str] | DataRoot | None


def _restore_schema(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """Files read back name list items `element`; give the table the canonical schema (with field docs) again."""
    return table.cast(schema) if not table.schema.equals(schema, check_metadata=True) else table

def complete_manifest(root: DataRoot, release_id: str) -> Manifest | None:
    path = root.join(RELEASES_DIR, release_id, MANIFEST_FILE)
    try:
        data = root.fs.cat_file(path)
    except FileNotFoundError:
        return None
    try:
        return Manifest.model_validate_json(data)
    except ValidationError as exc:
        raise CoworkEnvError(format_validation_error(exc, f"{root.url_of(path)}: unreadable manifest")) from None

def latest_release(data_root: Root = None) -> str | None:
    """The id `LATEST` names, or None before the first release."""
    root = open_root(data_root)
    try:
        text = root.fs.cat_file(root.join(RELEASES_DIR, LATEST_FILE)).decode("utf-8").strip()
    except FileNotFoundError:
        return None
    return text or None

def list_releases(data_root: Root = None) -> list[Manifest]:
    """Every complete release (one with a manifest), oldest first; temporary and incomplete ones are skipped."""
    root = open_root(data_root)
    try:
        entries = root.fs.ls(root.releases, detail=True)
    except FileNotFoundError:
        return []
    manifests = []
    for entry in entries:
        name = entry["name"].rstrip("/").rsplit("/", 1)[-1]
        if entry.get("type") != "directory" or not RELEASE_NAME.match(name):
            continue
        try:
            manifest = complete_manifest(root, name)
        except CoworkEnvError:  # a damaged manifest: not a usable release (read_manifest names the problem)
            continue
        if manifest is not None:
            manifests.append(manifest)
    return sorted(manifests, key=lambda m: (m.created_at, m.release_id))

def resolve_release(data_root: Root, release: str) -> str:
    """A release id, with `latest` meaning the one `LATEST` names."""
    root = open_root(data_root)
    if release.lower() == "latest":
        current = latest_release(root)
        if current is None:
            raise CoworkEnvError(f"no release published under {root.url} yet")
        return current
    if not RELEASE_NAME.match(release):
        raise CoworkEnvError(f"invalid release id {release!r}")
    return release

def read_manifest(data_root: Root, release: str = "latest") -> Manifest:
    root = open_root(data_root)
    release_id = resolve_release(root, release)
    manifest = complete_manifest(root, release_id)
    if manifest is None:
        known = [m.release_id for m in list_releases(root)][-5:]
        hint = f" (latest releases: {', '.join(known)})" if known else ""
        raise CoworkEnvError(f"no complete release {release_id!r} under {root.url}{hint}")
    return manifest

def release_path(data_root: Root, release: str = "latest") -> str:
    """The release directory as a path (local) or URL (other filesystems)."""
    root = open_root(data_root)
    return root.url_of(root.join(RELEASES_DIR, resolve_release(root, release)))

def table_path(data_root: Root, release: str, table: str) -> str:
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

def table_files(data_root: Root, release: str, table: str) -> list[str]:
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

def read_files(root: DataRoot, manifest: Manifest, table: str, columns: list[str] | None = None, filters: Any = None) -> pa.Table:
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
    data_root: Root,
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
    return read_files(root, read_manifest(root, release), table, columns, filters)

def read_release(data_root: Root, release: str = "latest") -> dict[str, pa.Table]:
    """Every table of a release, e.g. to carry a parent's tables forward into a new release."""
    root = open_root(data_root)
    manifest = read_manifest(root, release)
    return {name: read_files(root, manifest, name) for name in TABLES}

def verify_release(data_root: Root, release: str = "latest") -> list[str]:
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
        if manifest.content_hashes.get(table) not in (None, content_hash_of(entries)):
            problems.append(f"{table}: content hash differs from the file list")
    return problems
