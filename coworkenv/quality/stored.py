"""A stored table, judged a part at a time (`gates.run_gate_files`; docs/architecture.md, "Bounded memory", gate).

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

from coworkenv.errors import CoworkEnvError
from coworkenv.quality.suites import KEYS

if TYPE_CHECKING:
    from coworkenv.quality.suites import StageGate

CHUNK_ROWS = 200_000
"""At most this many rows of a stored table are judged at once (`run_gate_files`)."""
CHUNK_BYTES = 64 * 1024 * 1024
"""A part of a stored table ends once its batches held this many bytes (Arrow, bulky columns included): the text
read to derive the helper columns, though dropped at once, leaves the process that much larger."""


def stored_rows(paths: Mapping[str, Path], table: str, columns: list[str]) -> Iterator[tuple[Any, ...]] | None:
    """The stored table's rows as tuples of `columns`, a batch at a time; None when it lacks one of them."""
    import pyarrow.parquet as pq

    path = paths[table]
    if not set(columns) <= set(_schema(path, table).names):
        return None

    def rows() -> Iterator[tuple[Any, ...]]:
        try:
            for batch in pq.ParquetFile(path).iter_batches(batch_size=65_536, columns=columns, use_threads=False):
                yield from zip(*(batch.column(col).to_pylist() for col in columns), strict=True)
        except (OSError, pa.ArrowException) as exc:
            raise _unreadable(path, table, exc) from None

    return rows()


def _schema(path: Path, name: str) -> pa.Schema:
    import pyarrow.parquet as pq

    try:
        return pq.read_schema(path)
    except (OSError, pa.ArrowException) as exc:
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
            found = con.execute(f"SELECT {columns}, count(*) FROM read_parquet(?) {where} GROUP BY ALL HAVING count(*) > 1", [str(path)]).fetchall()
        except duckdb.Error as exc:
            raise _unreadable(path, name, exc) from None
        finally:
            con.close()
    return {tuple(row[:-1]): row[-1] for row in found}


def light_parts(gate: StageGate, name: str, path: Path, parsed: set[str], batch_size: int, chunk_rows: int,
                sources: Mapping[str, Any], duplicates: Mapping[tuple[Any, ...], int]) -> Iterator[Any]:  # fmt: skip
    """The table's frames, each ending at `chunk_rows` rows or `CHUNK_BYTES`, with their helper columns and the bulky
    columns as stand-ins, built batch by batch; one empty frame for an empty table."""
    import pandas as pd

    from coworkenv.data.batches import parquet_batches
    from coworkenv.quality.derive import key_rows, stand_ins

    def light(df: pd.DataFrame) -> pd.DataFrame:
        gate.derive_rows(name, df)
        gate.derive_links(name, df, sources)
        key_rows(df, KEYS[name], duplicates)
        stand_ins(df, gate.bulky.get(name, ()), parsed)
        return df

    def whole(parts: list[pd.DataFrame]) -> pd.DataFrame:
        return pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]

    parts: list[pd.DataFrame] = []
    rows = held = chunks = 0
    try:
        for batch in parquet_batches(path, batch_size):
            parts.append(light(batch.to_pandas()))
            rows, held = rows + batch.num_rows, held + batch.nbytes
            if rows >= chunk_rows or held >= CHUNK_BYTES:
                yield whole(parts)
                parts, rows, held, chunks = [], 0, 0, chunks + 1
    except (OSError, pa.ArrowException) as exc:
        raise _unreadable(path, name, exc) from None
    if parts:
        yield whole(parts)
    elif not chunks:
        yield light(_schema(path, name).empty_table().to_pandas())
