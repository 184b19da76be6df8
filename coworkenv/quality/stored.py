"""A stored table, judged a part at a time (`gates.run_gate_files`; docs/design/pipeline.md, "Bounded memory", gate).

What a part needs of the whole table comes first, read from only the columns it needs: the id sets of the
cross-table rules (`stored_rows`, given to `StageGate.link_sources`) and the keys more than one row has
(`stored_duplicates`, by DuckDB). Then `light_parts` reads the table a batch at a time into frames of about
`CHUNK_BYTES`, each with its helper columns and stand-ins for the bulky columns.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from coworkenv.data.batches import UNREADABLE
from coworkenv.errors import CoworkEnvError
from coworkenv.quality.suites import KEYS

if TYPE_CHECKING:
    from coworkenv.quality.suites import StageGate

CHUNK_ROWS = 200_000
"""A part of a stored table ends with the batch that brings it to this many rows (`run_gate_files`)."""
CHUNK_BYTES = 64 * 1024 * 1024
"""A part of a stored table ends once its batches held this many bytes (Arrow, bulky columns included): the text
read to derive the helper columns, though dropped at once, leaves the process that much larger."""


def stored_rows(paths: Mapping[str, Path], table: str, columns: list[str]) -> Iterator[tuple[Any, ...]] | None:
    """The stored table's rows as tuples of `columns`, a batch at a time; None when it lacks one of them."""
    path = paths[table]
    if not set(columns) <= set(_schema(path, table).names):
        return None

    def rows() -> Iterator[tuple[Any, ...]]:
        for batch in _column_batches(path, table, columns):
            yield from zip(*(batch.column(col).to_pylist() for col in columns), strict=True)

    return rows()


def _column_batches(path: Path, name: str, columns: list[str]) -> Iterator[pa.RecordBatch]:
    """Only `columns` of the stored table, 65,536 rows a batch (narrow columns: no byte bound needed)."""
    import pyarrow.parquet as pq

    try:
        batches = pq.ParquetFile(path).iter_batches(batch_size=65_536, columns=columns, use_threads=False)
    except UNREADABLE as exc:
        raise _unreadable(path, name, exc) from None
    return _read(batches, path, name)


def _schema(path: Path, name: str) -> pa.Schema:
    import pyarrow.parquet as pq

    try:
        return pq.read_schema(path)
    except UNREADABLE as exc:
        raise _unreadable(path, name, exc) from None


def _unreadable(path: Path, name: str, exc: Exception) -> CoworkEnvError:
    return CoworkEnvError(f"{path}: cannot read table {name} ({str(exc).splitlines()[0][:200]})")


def stored_duplicates(path: Path, name: str) -> dict[tuple[Any, ...], int]:
    """`derive.duplicate_keys` of a stored table's key (`KEYS`), by DuckDB: it spills to disk rather than hold every key."""
    import tempfile

    import duckdb

    key = KEYS[name]
    schema = _schema(path, name)
    if not set(key) <= set(schema.names) or any(pa.types.is_nested(schema.field(col).type) for col in key):
        return {}  # no key column, no rule; a nested one is no plain value (`derive.UNCOMPARABLE`)
    columns = ", ".join(f'"{col}"' for col in key)
    where = f'WHERE "{key[0]}" IS NOT NULL' if len(key) == 1 else ""
    with tempfile.TemporaryDirectory(prefix="coworkenv-gate-") as spill:
        con = duckdb.connect(config={"memory_limit": "64MB", "temp_directory": spill, "threads": 1})
        try:
            found = con.execute(
                f"SELECT {columns}, count(*) FROM read_parquet(?) {where} GROUP BY ALL HAVING count(*) > 1", [str(path)]
            ).fetchall()
        except duckdb.OutOfMemoryException as exc:  # the spill folder's disk is full, say: not the file's fault
            raise CoworkEnvError(
                f"{path}: DuckDB ran out of memory counting the keys of {name} ({str(exc).splitlines()[0][:200]})"
            ) from None
        except duckdb.Error as exc:
            raise _unreadable(path, name, exc) from None
        finally:
            con.close()
    return {tuple(row[:-1]): row[-1] for row in found}


def light_parts(
    gate: StageGate,
    name: str,
    path: Path,
    parsed: set[str],
    batch_size: int,
    chunk_rows: int,
    sources: Mapping[str, Any],
    duplicates: Mapping[tuple[Any, ...], int],
) -> Iterator[Any]:
    """The table's frames, each ending at the first batch that brings it to `chunk_rows` rows or `CHUNK_BYTES`, with
    their helper columns and the bulky columns as stand-ins, built batch by batch; one empty frame for an empty table.
    Each frame is what the whole table's frame holds at those rows: its row numbers (the index, which GX quotes
    where a table has no id column) and its columns' dtypes."""
    import pandas as pd

    from coworkenv.data.batches import parquet_batches
    from coworkenv.quality.derive import key_rows, stand_ins

    floats, objects = _with_nulls(path, name)

    def light(df: pd.DataFrame, start: int) -> pd.DataFrame:
        df.index = pd.RangeIndex(start, start + len(df))
        for col in floats:
            df[col] = df[col].astype("float64")
        for col in objects:
            df[col] = df[col].astype(object)
        gate.derive_rows(name, df)
        gate.derive_links(name, df, sources)
        key_rows(df, KEYS[name], duplicates)
        stand_ins(df, gate.bulky.get(name, ()), parsed)
        return df

    def whole(parts: list[pd.DataFrame]) -> pd.DataFrame:
        return pd.concat(parts) if len(parts) > 1 else parts[0]  # the parts' own index: the table's row numbers

    parts: list[pd.DataFrame] = []
    start = rows = held = 0
    for batch in _read(parquet_batches(path, batch_size), path, name):
        parts.append(light(batch.to_pandas(), start))
        start, rows, held = start + batch.num_rows, rows + batch.num_rows, held + batch.nbytes
        if rows >= chunk_rows or held >= CHUNK_BYTES:
            yield whole(parts)
            parts, rows, held = [], 0, 0
    if parts:
        yield whole(parts)
    elif not start:
        yield light(_schema(path, name).empty_table().to_pandas(), 0)


def _read(batches: Iterator[pa.RecordBatch], path: Path, name: str) -> Iterator[pa.RecordBatch]:
    """`batches`, a failure to read one reported as the table being unreadable (and nothing else that way)."""
    while True:
        try:
            batch = next(batches, None)
        except UNREADABLE as exc:
            raise _unreadable(path, name, exc) from None
        if batch is None:
            return
        yield batch


def _with_nulls(path: Path, name: str) -> tuple[list[str], list[str]]:
    """The integer and the boolean columns with a null somewhere in the table. pandas makes such a column float64
    (object) in a frame that holds one of the nulls only; the other parts get that dtype too, as in the whole
    table's frame, so that their values (and the examples quoted) read alike: `9.0`, not `9`."""
    schema = _schema(path, name)
    ints = [f.name for f in schema if pa.types.is_integer(f.type)]
    bools = [f.name for f in schema if pa.types.is_boolean(f.type)]
    if not ints and not bools:
        return [], []
    nulls = dict.fromkeys(ints + bools, 0)
    for batch in _column_batches(path, name, list(nulls)):
        for col in nulls:
            nulls[col] += batch.column(col).null_count
    return [col for col in ints if nulls[col]], [col for col in bools if nulls[col]]
