"""Resource limits for SQL over releases (docs/datasets.md, "SQL limits"): memory, threads, time and result size.

DuckDB bounds memory (`memory_limit`, no spilling to disk) and threads itself. It has no statement timeout: the
statement runs on a worker thread that the caller waits for; at the deadline the connection is interrupted, and if
DuckDB does not stop within `INTERRUPT_GRACE_S` (a single scalar call such as `repeat('x', 2e9)` is not
interruptible) the caller gives up on it anyway and reports the timeout; the CLI then exits, which ends the thread.
Results are fetched in batches and refused as soon as they pass the row or byte cap.

The connection can touch no file but the release's listed Parquet parts (`enable_external_access = false` with
`allowed_paths`), and statements that write files (`COPY`, `EXPORT`, or either behind `EXPLAIN`/`PREPARE`) are
refused before they run, so a query cannot alter a release. The configuration is locked, so SQL cannot lift a limit.
"""

from __future__ import annotations

import os
import re
import threading
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from coworkenv.errors import CoworkEnvError

if TYPE_CHECKING:  # DuckDB and pyarrow load when a statement runs: the CLI imports this module for its defaults
    import duckdb
    import pyarrow as pa

INTERRUPT_GRACE_S = 1.0
BATCH_ROWS = 8192
_WRITES = re.compile(r"\b(copy|export)\b", re.IGNORECASE)
_MEMORY = re.compile(r"^\d+(\.\d+)?\s*([KMGT]i?B|B|%)$", re.IGNORECASE)


class QueryLimits(BaseModel):
    """Bounds on one SQL statement over releases; every field has a generous but finite default."""

    model_config = ConfigDict(frozen=True)

    memory_limit: str = Field("4GB", description="DuckDB memory_limit, e.g. 4GB, 512MB or 50% (of physical memory).")
    threads: int = Field(
        default_factory=lambda: os.cpu_count() or 1,
        ge=1,
        description="DuckDB worker threads (default: the number of CPUs).",
    )
    timeout_s: float = Field(300.0, gt=0, description="Seconds a statement may run, fetching its result included.")
    max_rows: int = Field(1_000_000, ge=1, description="Most rows a result may have.")
    max_bytes: int = Field(
        512 * 1024 * 1024, ge=1, description="Most bytes a result may take in memory (Arrow buffers)."
    )

    @field_validator("memory_limit")
    @classmethod
    def _memory(cls, value: str) -> str:
        if not _MEMORY.match(value.strip()):
            raise ValueError(f"memory limit must be a size such as 4GB, 512MB or 50%, got {value!r}")
        return value.strip()


def connection_config(limits: QueryLimits) -> dict[str, Any]:
    """The DuckDB configuration a catalog connection opens with (external access is closed once the views exist)."""
    return {"memory_limit": limits.memory_limit, "threads": limits.threads, "temp_directory": ""}


def seal(con: duckdb.DuckDBPyConnection, allowed_paths: list[str]) -> None:
    """Allow reading only `allowed_paths`, then lock the configuration: called once the views are created."""
    listed = "[" + ", ".join("'" + p.replace("'", "''") + "'" for p in allowed_paths) + "]"
    con.execute(f"set allowed_paths = {listed}")
    con.execute("set enable_external_access = false")
    con.execute("set lock_configuration = true")


def refuse_file_writes(sql: str) -> None:
    """COPY and EXPORT write files, even to the allowed (release) paths; they are refused by DuckDB's own parser."""
    import duckdb

    try:
        statements = duckdb.extract_statements(sql)
    except duckdb.Error:
        return  # a syntax error: DuckDB names it when the statement runs
    for statement in statements:
        kind = statement.type
        if kind in (duckdb.StatementType.COPY, duckdb.StatementType.EXPORT) or (
            kind in (duckdb.StatementType.EXPLAIN, duckdb.StatementType.PREPARE) and _WRITES.search(statement.query)
        ):
            word = statement.query.strip().split(None, 1)[0].upper() if statement.query.strip() else kind.name
            raise CoworkEnvError(f"SQL: {word} statements that write files are refused: SQL over releases is read-only")


def _fetch(con: duckdb.DuckDBPyConnection, sql: str, limits: QueryLimits, stop: threading.Event) -> pa.Table:
    import pyarrow as pa

    relation = con.sql(sql)
    if relation is None:
        return pa.table({})
    reader = relation.to_arrow_reader(BATCH_ROWS)
    batches, rows, size = [], 0, 0
    for batch in reader:
        if stop.is_set():
            raise CoworkEnvError("stopped")
        rows += batch.num_rows
        size += batch.nbytes
        if rows > limits.max_rows:
            raise CoworkEnvError(
                f"SQL result has more than {limits.max_rows} rows (--max-result-rows): add a LIMIT or aggregate"
            )
        if size > limits.max_bytes:
            cap = f"{limits.max_bytes / (1024 * 1024):g} MiB"
            raise CoworkEnvError(f"SQL result is larger than {cap} (--max-result-mb): select fewer or shorter values")
        batches.append(batch)
    return pa.Table.from_batches(batches, schema=reader.schema)


def run_limited(con: duckdb.DuckDBPyConnection, sql: str, limits: QueryLimits, one_line: Any) -> pa.Table:
    """Run SQL under `limits`; the last statement's result (empty table for a statement without rows)."""
    import duckdb

    refuse_file_writes(sql)
    box: dict[str, Any] = {}
    stop = threading.Event()

    def work() -> None:
        try:
            box["result"] = _fetch(con, sql, limits, stop)
        except BaseException as exc:  # handed to the waiting thread
            box["error"] = exc

    worker = threading.Thread(target=work, name="coworkenv-sql", daemon=True)
    worker.start()
    try:
        worker.join(limits.timeout_s)
    except BaseException:  # Ctrl-C: stop DuckDB too
        stop.set()
        con.interrupt()
        raise
    if worker.is_alive():
        stop.set()
        con.interrupt()
        worker.join(INTERRUPT_GRACE_S)
        raise CoworkEnvError(f"SQL statement ran past the {limits.timeout_s:g} s timeout (--timeout) and was stopped")
    error = box.get("error")
    if isinstance(error, duckdb.OutOfMemoryException):
        raise CoworkEnvError(
            f"SQL statement needs more than the memory limit {limits.memory_limit} (--memory-limit): {one_line(error)}"
        ) from None
    if isinstance(error, duckdb.Error):
        raise CoworkEnvError(f"SQL error: {one_line(error)}") from None
    if error is not None:
        raise error
    return box["result"]
