"""Reading published releases: the one reader every consumer uses (CLI, SQL catalog, exports, docs, training).

Only complete releases (ones with a `manifest.json`) are ever read; `.tmp-*` directories are skipped.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import ValidationError

from coworkenv.data.batches import UNREADABLE, parquet_batches
from coworkenv.data.integrity import arrow_fs, check_release, release_problems
from coworkenv.data.integrity import table_files as listed_files
from coworkenv.data.layout import DEFAULT_LINEAGE, LATEST_FILE, MANIFEST_FILE, RELEASE_NAME, TASKS_KIND, Manifest
from coworkenv.data.root import RELEASES_DIR, DataRoot, Root, open_root
from coworkenv.data.schemas import TABLES, fingerprint
from coworkenv.errors import CoworkEnvError, first_line, format_validation_error


def _restore_schema(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """Files read back name list items `element`; give the table the canonical schema (with field docs) again."""
    return table.cast(schema) if not table.schema.equals(schema, check_metadata=True) else table


def complete_manifest(root: DataRoot, release_id: str) -> Manifest | None:
    path = root.join(RELEASES_DIR, release_id, MANIFEST_FILE)
    try:
        data = root.fs.cat_file(path)
    except FileNotFoundError:
        return None
    except OSError as exc:  # a directory named manifest.json, a folder without read permission
        raise CoworkEnvError(
            f"{root.url_of(path)}: cannot read the manifest ({exc.strerror or type(exc).__name__})"
        ) from None
    try:
        return Manifest.model_validate_json(data)
    except ValidationError as exc:
        raise CoworkEnvError(format_validation_error(exc, f"{root.url_of(path)}: unreadable manifest")) from None


def latest_release(data_root: Root = None) -> str | None:
    """The id `LATEST` names, or None before the first release."""
    root = open_root(data_root)
    path = root.join(RELEASES_DIR, LATEST_FILE)
    try:
        data = root.fs.cat_file(path)
    except FileNotFoundError:
        return None
    except OSError as exc:  # LATEST a directory, or unreadable: never guess another release
        reason = exc.strerror or type(exc).__name__
        raise CoworkEnvError(
            f"{root.url_of(path)}: cannot read ({reason}); it must be a file naming the latest release"
        ) from None
    try:
        text = data.decode("utf-8").strip()
    except UnicodeDecodeError:
        raise CoworkEnvError(f"{root.url_of(path)}: not UTF-8 text; it must name the latest release") from None
    if text and not RELEASE_NAME.match(text):
        raise CoworkEnvError(
            f"{root.url_of(path)} names {text[:60]!r}, which is not a complete release (not a release id)"
        )
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


def previous_in_line(data_root: Root, lineage: str, run_id: str) -> str | None:
    """The newest task release of line `lineage` (its config's `lineage`; none: the synthesis job's) that another run
    published: the parent of the release `run_id` publishes, whatever LATEST names."""
    line = [
        m
        for m in list_releases(data_root)
        if m.kind == TASKS_KIND and m.run_id != run_id and m.config.get("lineage", DEFAULT_LINEAGE) == lineage
    ]
    return max(line, key=lambda m: m.created_at).release_id if line else None


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


def table_files(data_root: Root, release: str, table: str) -> list[str]:
    """The table's Parquet files in read order, as paths or URLs (e.g. `datasets.load_dataset("parquet", data_files=…)`)."""
    if table not in TABLES:
        raise CoworkEnvError(f"unknown table {table!r}; tables are: {', '.join(TABLES)}")
    root = open_root(data_root)
    manifest = read_manifest(root, release)
    check_release(root, manifest, [table])
    return [root.url_of(p) for p in listed_files(root, manifest, table)]


def read_files(
    root: DataRoot, manifest: Manifest, table: str, columns: list[str] | None = None, filters: Any = None
) -> pa.Table:
    """The table's rows, after the cheap integrity check of its files (`coworkenv.data.integrity`)."""
    check_release(root, manifest, [table])
    schema = TABLES[table]
    current = manifest.schema_fingerprints.get(table) == fingerprint(schema)
    fs = arrow_fs(root)
    parts = []
    for path in listed_files(root, manifest, table):
        try:
            parts.append(pq.read_table(path, filesystem=fs, columns=columns, filters=filters, partitioning=None))
        except UNREADABLE as exc:  # damaged pages behind an intact footer
            raise CoworkEnvError(
                f"damaged release {manifest.release_id}: {root.url_of(path)}: unreadable ({first_line(exc)})"
            ) from None
    if not parts:
        raise CoworkEnvError(f"release {manifest.release_id}: table {table} has no files")
    result = pa.concat_tables(parts) if len(parts) > 1 else parts[0]
    if current:
        target = schema if columns is None else pa.schema([schema.field(c) for c in columns])
        result = _restore_schema(result, target)
    return result


def iter_files(root: DataRoot, manifest: Manifest, table: str, batch_size: int = 10_000) -> Iterator[pa.Table]:
    """The table's rows at most `batch_size` at a time (fewer where they are wide: `data.batches`), file by file in
    read order, as `read_files` gives them whole (after the same cheap integrity check): memory holds one batch,
    however large the table."""
    check_release(root, manifest, [table])
    schema = TABLES[table]
    current = manifest.schema_fingerprints.get(table) == fingerprint(schema)
    fs = arrow_fs(root)
    paths = listed_files(root, manifest, table)
    if not paths:
        raise CoworkEnvError(f"release {manifest.release_id}: table {table} has no files")
    for path in paths:
        try:
            for batch in parquet_batches(path, batch_size, filesystem=fs):
                part = pa.Table.from_batches([batch])
                yield _restore_schema(part, schema) if current else part
        except UNREADABLE as exc:  # damaged pages behind an intact footer
            raise CoworkEnvError(
                f"damaged release {manifest.release_id}: {root.url_of(path)}: unreadable ({first_line(exc)})"
            ) from None


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
    """Problems found re-hashing every file against the manifest, plus the cheap checks (empty: intact)."""
    root = open_root(data_root)
    return release_problems(root, read_manifest(root, release), fresh=True)
