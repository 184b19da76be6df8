"""The DuckDB catalog over published releases (docs/design/data.md, "SQL"): `src_*` relations, then the views in `sql/`.

`connect(root, release)` opens an in-memory DuckDB connection over one release, the latest one, or all of them, and
creates, in this order:

- `src_<table>` for every table in `TABLES`: the Parquet files the release's manifest lists, never a glob, after
  the integrity check of `coworkenv.data.integrity` (hive partitions read as columns), the table's full Arrow
  schema guaranteed (a table missing from a release reads as empty), plus a `release_id` column. Over
  `--release all` each release is read on its own and the parts are stacked by name, so releases whose schemas or
  partition layouts differ still combine. Which releases exist is the reader's answer
  (`coworkenv.data.reader.list_releases`): `releases/.tmp-*` directories and anything without a `manifest.json`
  are never read.
- `src_releases` (one row per selected release, from the manifests) and `ref_capabilities` (the capability
  taxonomy of `coworkenv.spec.capabilities`).
- every `sql/staging/*.sql`, then `sql/intermediate/*.sql`, then `sql/marts/*.sql` (`STAGES`): each file holds one
  SELECT and becomes the view named after the file, so a view name is unique across the folders. A view may read
  the views of its own folder and of the folders before it; within a folder it is created after the views it
  mentions (then by file name).

DuckDB reads the files itself: from a local (or mounted) data root directly, from any other fsspec root (`s3://`,
`gs://`, `memory://`, …) through the root's fsspec filesystem, registered with the connection
(`register_filesystem`; each read goes through Python: docs/datasets.md, "Where releases can live"). Once the views
exist the connection is sealed: only those files readable, limits locked (`coworkenv.data.sql_limits`).
The column tests beside the views (`sql/<stage>/schema.yml`) run over this connection: `coworkenv.data.sql_tests`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from difflib import get_close_matches
from pathlib import Path

import duckdb
import pyarrow as pa

from coworkenv.data.integrity import check_release
from coworkenv.data.integrity import table_files as listed_files
from coworkenv.data.layout import LATEST_FILE, RELEASE_NAME, Manifest
from coworkenv.data.reader import complete_manifest, latest_release, list_releases, release_path
from coworkenv.data.root import Root, open_root
from coworkenv.data.schemas import PARTITIONS, TABLES
from coworkenv.data.sql_limits import QueryLimits, connection_config, run_limited, seal
from coworkenv.errors import CoworkEnvError

SQL_DIR = Path(__file__).resolve().parents[2] / "sql"
"""The repository's `sql/` folder (staging/, intermediate/, marts/, queries/)."""

STAGES = ("staging", "intermediate", "marts")
"""The view folders of `sql/`, in creation order: staging views read `src_*`, intermediate views the staging ones
and each other, marts any of them."""
INTERNAL_SCHEMA = "coworkenv_internal"


@dataclass(frozen=True)
class Release:
    """A release as the views read it: its id, its directory (a path, or a URL on other filesystems) and the reader's
    manifest."""

    release_id: str
    path: str
    manifest: Manifest = field(compare=False)
    files: dict[str, list[str]] = field(compare=False, default_factory=dict)
    """Per table, its Parquet files as the manifest lists them (`coworkenv.data.integrity.table_files`), as DuckDB
    takes them: paths, or URLs of the root's filesystem."""


def resolve_releases(data_root: Root, release: str = "latest") -> list[Release]:
    """`latest`, `all` or a release id → the releases to read, oldest first (the reader's order)."""
    root = open_root(data_root)
    base = root.url_of(root.releases)
    available = [
        Release(
            m.release_id,
            release_path(root, m.release_id),
            m,
            {t: [root.url_of(f) for f in listed_files(root, m, t)] for t in TABLES},
        )
        for m in list_releases(root)
    ]
    if release == "all":
        if not available:
            raise CoworkEnvError(f"no release under {root.url}: {base} holds no complete release")
        return available
    if release == "latest":
        wanted = latest_release(root)
        if wanted is None:
            known = [r.release_id for r in available]
            extra = f" (found {', '.join(known)} but no {LATEST_FILE} pointer)" if known else ""
            raise CoworkEnvError(f"no release under {root.url}: {base}/{LATEST_FILE} is missing or empty{extra}")
    else:
        wanted = release
    for candidate in available:
        if candidate.release_id == wanted:
            return [candidate]
    if release == "latest":
        raise CoworkEnvError(f"{base}/{LATEST_FILE} names {wanted!r}, which is not a complete release")
    if RELEASE_NAME.match(wanted):
        complete_manifest(root, wanted)  # a damaged manifest is named as such, not as an unknown release
    names = [r.release_id for r in available]
    close = get_close_matches(wanted, names, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else (f"; known: {', '.join(names[-5:])}" if names else "")
    raise CoworkEnvError(f"unknown release {wanted!r} under {root.url}{hint}")


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _table_part(table: str, release: Release) -> str | None:
    """SELECT over one release's files of one table (the manifest's list, never a glob), or None where it has none."""
    files = release.files.get(table, [])
    if not files:
        return None
    folder = f"{release.path}/{table}/"
    relative = [f.removeprefix(folder).split("/")[:-1] for f in files]
    keys = [
        key
        for key in PARTITIONS.get(table, [])
        if any(part.startswith(f"{key}=") for parts in relative for part in parts)
    ]
    options = ["union_by_name = true", f"hive_partitioning = {'true' if keys else 'false'}"]
    if keys:
        options.append("hive_types = {" + ", ".join(f"{_literal(k)}: 'varchar'" for k in keys) + "}")
    listed = "[" + ", ".join(_literal(f) for f in files) + "]"
    return f"select *, {_literal(release.release_id)} as release_id from read_parquet({listed}, {', '.join(options)})"


def source_sql(table: str, releases: list[Release]) -> str:
    """The body of `src_<table>`: the empty typed table first (fixes the column set and order), then each release."""
    parts = [f"select *, null::varchar as release_id from {INTERNAL_SCHEMA}.{table}"]
    parts += [part for release in releases if (part := _table_part(table, release)) is not None]
    return "\nunion all by name\n".join(parts)


def _releases_table(releases: list[Release], latest: str | None) -> pa.Table:
    rows = []
    for order, r in enumerate(releases):
        m = r.manifest.model_dump(mode="json")
        rows.append(
            {
                "release_id": r.release_id,
                "release_order": order,
                "parent": m["parent"],
                "created_at": m["created_at"],
                "is_latest": r.release_id == latest,
                "row_counts": json.dumps(m["row_counts"], sort_keys=True),
                "manifest": json.dumps(m, sort_keys=True),
            }
        )
    schema = pa.schema(
        [
            ("release_id", pa.string()),
            ("release_order", pa.int32()),
            ("parent", pa.string()),
            ("created_at", pa.string()),
            ("is_latest", pa.bool_()),
            ("row_counts", pa.string()),
            ("manifest", pa.string()),
        ]
    )
    return pa.Table.from_pylist(rows, schema=schema)


def _capabilities_table() -> pa.Table:
    from coworkenv.spec.capabilities import CAPABILITIES

    rows = [
        {"capability": name, "ordinal": i, "benchmark_group": cap.benchmark_group, "description": cap.description}
        for i, (name, cap) in enumerate(CAPABILITIES.items())
    ]
    schema = pa.schema(
        [
            ("capability", pa.string()),
            ("ordinal", pa.int32()),
            ("benchmark_group", pa.string()),
            ("description", pa.string()),
        ]
    )
    return pa.Table.from_pylist(rows, schema=schema)


_COMMENT = re.compile(r"--[^\n]*|/\*.*?\*/", re.DOTALL)


def strip_sql(text: str) -> str:
    """The statement without comments, surrounding whitespace and a trailing semicolon."""
    return _COMMENT.sub(" ", text).strip().rstrip(";").strip()


def view_files(sql_dir: Path | None = None) -> list[tuple[str, Path]]:
    """(view name, file) in creation order: by `STAGES`, then within a folder dependencies first, then by name."""
    base = Path(sql_dir) if sql_dir is not None else SQL_DIR
    ordered: list[tuple[str, Path]] = []
    seen: set[str] = set()
    for stage in STAGES:
        files = {p.stem: p for p in sorted((base / stage).glob("*.sql"))}
        duplicate = seen & set(files)
        if duplicate:
            raise CoworkEnvError(f"{base}: view {sorted(duplicate)[0]!r} is defined in two folders")
        bodies = {name: strip_sql(path.read_text(encoding="utf-8")).lower() for name, path in files.items()}
        deps = {
            name: {other for other in files if other != name and re.search(rf"\b{re.escape(other)}\b", body)}
            for name, body in bodies.items()
        }
        done: list[str] = []
        while len(done) < len(files):
            ready = [n for n in files if n not in done and deps[n] <= set(done)]
            if not ready:
                stuck = sorted(set(files) - set(done))
                raise CoworkEnvError(f"{base / stage}: circular view dependencies among {', '.join(stuck)}")
            done.append(ready[0])
        ordered += [(name, files[name]) for name in done]
        seen |= set(files)
    return ordered


_NO_TABLE = re.compile(r"Table with name (\w+) does not exist!(?: Did you mean \"[^\"]*\"\?)?", re.IGNORECASE)


def one_line(exc: BaseException) -> str:
    """DuckDB's message on one line: its text up to the `LINE n:` excerpt, lines joined. A table name that is not
    there gets the project's hint instead of DuckDB's guess (which can name the connection's internal schema)."""
    if isinstance(exc, duckdb.OutOfMemoryException):  # the rest of DuckDB's text advises settings the user cannot reach
        return f"{str(exc).splitlines()[0].strip()} (raise --memory-limit)"
    lines = []
    for line in str(exc).splitlines():
        if line.startswith("LINE "):
            break
        if line.strip():
            lines.append(line.strip())
    return _NO_TABLE.sub(_table_hint, " ".join(lines)) or type(exc).__name__


def _table_hint(match: re.Match[str]) -> str:
    name = match.group(1).lower()
    table = name.removeprefix("src_").removeprefix("stg_")
    known = (
        f"use src_{table} (as stored) or stg_{table} (typed, one row per key)"
        if table in TABLES
        else "`show tables` lists them"
    )
    return f"no table or view {match.group(1)}; {known}"


def _create_from_arrow(con: duckdb.DuckDBPyConnection, name: str, data: pa.Table) -> None:
    def create() -> None:
        con.register("__coworkenv_arrow", data)
        try:
            con.execute(f"create or replace table {name} as select * from __coworkenv_arrow")
        finally:
            con.unregister("__coworkenv_arrow")

    _execute_ddl_step(create, f"setting up table {name.removeprefix(INTERNAL_SCHEMA + '.')}")


def connect(
    data_root: Root,
    release: str = "latest",
    *,
    sql_dir: Path | None = None,
    limits: QueryLimits | None = None,
    verify: bool = False,
) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection with `src_*`, `src_releases`, `ref_capabilities` and every view of `sql/`.

    Each release is checked against its manifest first (`coworkenv.data.integrity`; `verify`: every file hashed
    afresh); the connection then reads only the listed files, under `limits` (`coworkenv.data.sql_limits`)."""
    limits = limits or QueryLimits()
    releases = resolve_releases(data_root, release)
    root = open_root(data_root)
    for r in releases:
        check_release(root, r.manifest, fresh=verify)
    latest = latest_release(root)
    try:
        con = duckdb.connect(":memory:", config=connection_config(limits))
    except duckdb.Error as exc:
        raise CoworkEnvError(f"SQL limits: {one_line(exc)}") from None
    try:
        if not root.local:  # DuckDB reads the listed URLs through the root's own filesystem (its credentials included)
            _execute_ddl_step(lambda: con.register_filesystem(root.fs), f"data root {root.url}")
        con.execute(f"create schema {INTERNAL_SCHEMA}")
        for table, schema in TABLES.items():
            _create_from_arrow(con, f"{INTERNAL_SCHEMA}.{table}", schema.empty_table())
            _execute_ddl(con, f"create view src_{table} as\n{source_sql(table, releases)}", f"src_{table}")
        _create_from_arrow(con, "src_releases", _releases_table(releases, latest))
        _create_from_arrow(con, "ref_capabilities", _capabilities_table())
        for name, path in view_files(sql_dir):
            body = strip_sql(path.read_text(encoding="utf-8"))
            _execute_ddl(con, f"create view {name} as\n{body}", str(path))
        seal(con, [f for r in releases for files in r.files.values() for f in files])
    except BaseException:
        con.close()
        raise
    return con


def close(con: duckdb.DuckDBPyConnection) -> None:
    """Close a connection; one still busy with a statement given up on at its timeout is left to process exit."""
    try:
        con.close()
    except duckdb.Error:
        pass


def _execute_ddl(con: duckdb.DuckDBPyConnection, statement: str, where: str) -> None:
    _execute_ddl_step(lambda: con.execute(statement), where)


def _execute_ddl_step(step: Callable[[], object], where: str) -> None:
    try:
        step()
    except duckdb.Error as exc:
        raise CoworkEnvError(f"{where}: {one_line(exc)}") from None


def run_query(con: duckdb.DuckDBPyConnection, sql: str, limits: QueryLimits | None = None) -> pa.Table:
    """Run SQL under `limits` (the last statement's result is returned; a statement without rows gives an empty table)."""
    if not strip_sql(sql):
        raise CoworkEnvError("empty SQL")
    return run_limited(con, sql, limits or QueryLimits(), one_line)


def query(
    sql: str,
    data_root: Root,
    release: str = "latest",
    *,
    sql_dir: Path | None = None,
    limits: QueryLimits | None = None,
) -> pa.Table:
    """Run SQL over the views of `release` (`latest`, `all` or an id) and return the result as an Arrow table."""
    con = connect(data_root, release, sql_dir=sql_dir, limits=limits)
    try:
        return run_query(con, sql, limits)
    finally:
        close(con)
