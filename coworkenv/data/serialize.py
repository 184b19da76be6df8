"""A release table as its Parquet files, streamed (docs/design/contracts.md, "Releases", and docs/design/pipeline.md, "Bounded memory").

A table comes from a `TableSource`: a whole Arrow table, or a Parquet file (a run's staged table) read at most
`batch_size` rows, and about `data.batches.BATCH_BYTES`, at a time. Its files are the same whichever it is:
partitions in ascending key order (`PARTITIONS`), rows in source order within each, `part-<n>.parquet` files of at
most `rows_per_file` rows (`publisher.MAX_ROWS_PER_FILE`), row groups of `ROW_GROUP_SIZE` rows, zstd. A partitioned
table is first split into one spill file per partition (in a temporary folder, as Arrow IPC streams) so that each
partition's files can be written in one pass. What is in memory at once: a batch of the source, and the row group
being written (at most `ROW_GROUP_SIZE` rows and `ROW_GROUP_BYTES` of text).

Each row group is written from one contiguous Arrow array per column, so the bytes do not depend on how the source
was chunked: a table published whole and the same table streamed from a file give byte-identical files.
"""

from __future__ import annotations

import functools
import hashlib
import os
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import groupby
from pathlib import Path
from typing import IO, Any
from urllib.parse import quote

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from coworkenv.data.batches import UNREADABLE, parquet_batches
from coworkenv.data.schemas import PARTITIONS, TABLES, conform_table
from coworkenv.errors import CoworkEnvError

ROW_GROUP_SIZE = 128 * 1024
"""Rows per Parquet row group: the unit DuckDB and pyarrow skip using min/max statistics."""
ROW_GROUP_BYTES = 32 * 1024 * 1024
"""A row group also ends before the text its rows hold (every string, nested ones included) would pass this many
bytes: 128 Ki rows of a wide table (a task's spec, a trajectory's messages: several KB each) would otherwise all
be in memory at once, and a group is held about three times while it is written (its slices, their contiguous
copy, the encoder's pages): 32 MiB keeps publishing a wide table near 300 MB where 64 MiB took 440. The cut
depends on the rows alone, so the files still do not depend on how the source was chunked; tables of narrow rows
keep their 128 Ki-row groups."""
SOURCE_BATCH = 10_000
"""Rows read from a Parquet source at a time, at most (fewer where its rows are wide: `data.batches`)."""

TableSource = pa.Table | str | os.PathLike[str] | None
"""A table to publish: rows in memory, the path of a Parquet file holding them, or None (an empty table)."""


@dataclass(frozen=True)
class Source:
    """A table's rows, conformed to its release schema, as a stream that can be read again."""

    name: str
    rows: Callable[[], Iterator[pa.Table]]


def source(name: str, value: TableSource, batch_size: int = SOURCE_BATCH) -> Source:
    """Check `value` against table `name`'s schema now (nothing is written if it does not fit); stream it later."""
    if isinstance(value, str | os.PathLike):
        path = Path(value)
        try:
            found = pq.read_schema(path)
        except UNREADABLE as exc:
            raise CoworkEnvError(f"{path}: not a Parquet table ({str(exc).splitlines()[0][:200]})") from None
        conform_table(name, found.empty_table())  # the columns and types fit; nulls are checked batch by batch

        def read() -> Iterator[pa.Table]:
            for batch in parquet_batches(path, batch_size):
                yield conform_table(name, batch)

        return Source(name, read)
    table = conform_table(name, value)
    return Source(name, lambda: iter([table]))


@dataclass(frozen=True)
class WrittenFile:
    path: str
    """Relative to the release, e.g. `tasks/family=mail_triage/part-0.parquet`."""
    rows: int
    bytes: int
    sha256: str


class _Hashing:
    """A write-only binary stream that hashes and counts what passes through to `out` (or nowhere)."""

    def __init__(self, out: IO[bytes] | None):
        self.out, self.hash, self.size, self.closed = out, hashlib.sha256(), 0, False

    def write(self, data: Any) -> int:
        view = memoryview(data)
        self.hash.update(view)
        self.size += view.nbytes
        if self.out is not None:
            self.out.write(view)
        return view.nbytes

    def tell(self) -> int:
        return self.size

    def flush(self) -> None:
        if self.out is not None:
            self.out.flush()

    def writable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def readable(self) -> bool:
        return False

    def close(self) -> None:
        self.closed = True


Opener = Callable[[str], IO[bytes]] | None
"""Opens a release file (relative path) for writing; None: hash the files without writing them."""


def write_table_files(src: Source, open_file: Opener, rows_per_file: int) -> list[WrittenFile]:
    """Write the table's Parquet files (through `open_file`), in read order; each one's path, rows, size and sha256."""
    written = []
    with tempfile.TemporaryDirectory(prefix="coworkenv-partitions-") as spill:
        for directory, rows in _partitions(src, Path(spill)):
            prefix = f"{src.name}/{directory}/" if directory else f"{src.name}/"
            written += _write_partition(src.name, prefix, _row_groups(src.name, rows, rows_per_file), open_file)
    return written


def ordered_rows(src: Source) -> Iterator[pa.Table]:
    """The table's rows in the order its files hold them (partition by partition)."""
    with tempfile.TemporaryDirectory(prefix="coworkenv-partitions-") as spill:
        for _directory, rows in _partitions(src, Path(spill)):
            yield from rows


def _write_partition(
    name: str, prefix: str, groups: Iterator[tuple[int, pa.Table]], open_file: Opener
) -> list[WrittenFile]:
    written = []
    for part, file_groups in groupby(groups, key=lambda g: g[0]):
        path = f"{prefix}part-{part}.parquet"
        out = open_file(path) if open_file is not None else None
        sink, rows = _Hashing(out), 0
        try:
            with pq.ParquetWriter(sink, TABLES[name], compression="zstd", write_statistics=True) as writer:
                for _, group in file_groups:
                    writer.write_table(group, row_group_size=ROW_GROUP_SIZE)
                    rows += group.num_rows
        finally:
            if out is not None:
                out.close()
        written.append(WrittenFile(path, rows, sink.size, sink.hash.hexdigest()))
    return written


def _row_groups(name: str, tables: Iterator[pa.Table], rows_per_file: int) -> Iterator[tuple[int, pa.Table]]:
    """(file number, row group): the rows cut into files of `rows_per_file` rows and those into row groups of
    ROW_GROUP_SIZE rows, a group ending early where its next row would take its text past ROW_GROUP_BYTES (a group
    has at least one row); one empty group when there are no rows (an empty table still has its file)."""
    held: list[pa.Table] = []
    n_held = done = held_bytes = 0
    for table in tables:
        weights = _text_bytes(table)
        while table.num_rows:
            size = min(ROW_GROUP_SIZE, rows_per_file - done % rows_per_file)
            room = min(size - n_held, table.num_rows)
            total = held_bytes + np.cumsum(weights[:room])
            take = int(np.searchsorted(total, ROW_GROUP_BYTES, side="right")) or (0 if n_held else 1)
            if take:
                held.append(table.slice(0, take))
                n_held, held_bytes = n_held + take, int(total[take - 1])
                table, weights = table.slice(take), weights[take:]
            if n_held == size or (take < room and n_held):
                yield done // rows_per_file, _contiguous(held)
                done, held, n_held, held_bytes = done + n_held, [], 0, 0
    if n_held or not done:
        yield done // rows_per_file, _contiguous(held) if held else TABLES[name].empty_table()


def _text_bytes(table: pa.Table) -> np.ndarray:
    """Per row, the bytes of every string and binary value it holds, nested ones included."""
    total = np.zeros(table.num_rows, dtype=np.int64)
    for column in table.columns:
        offset = 0
        for chunk in column.chunks:
            total[offset : offset + len(chunk)] += _array_text_bytes(chunk)
            offset += len(chunk)
    return total


def _array_text_bytes(array: pa.Array) -> np.ndarray:
    kind = array.type
    if (
        pa.types.is_string(kind)
        or pa.types.is_large_string(kind)
        or pa.types.is_binary(kind)
        or pa.types.is_large_binary(kind)
    ):
        return pc.fill_null(pc.binary_length(array), 0).to_numpy(zero_copy_only=False).astype(np.int64)
    if pa.types.is_struct(kind):
        out = np.zeros(len(array), dtype=np.int64)
        for child in array.flatten():  # `flatten`, not `field`: it applies the array's slice offset
            out += _array_text_bytes(child)
        return out
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        # From the offsets, not `list_flatten`: a null list's offsets may still span values (Arrow allows it), which
        # `list_flatten` skips but `list_parent_indices` counts. Such a list holds no text, as once stored.
        offsets = array.offsets.to_numpy(zero_copy_only=False).astype(np.int64)
        first = int(offsets[0])
        weights = _array_text_bytes(array.values.slice(first, int(offsets[-1]) - first))
        sums = np.concatenate(([0], np.cumsum(weights)))
        out = sums[offsets[1:] - first] - sums[offsets[:-1] - first]
        if array.null_count:
            out[array.is_null().to_numpy(zero_copy_only=False)] = 0
        return out.astype(np.int64)
    return np.zeros(len(array), dtype=np.int64)


def _contiguous(parts: list[pa.Table]) -> pa.Table:
    table = pa.concat_tables(parts) if len(parts) > 1 else parts[0]
    try:
        return table.combine_chunks()
    except pa.ArrowInvalid:  # over 2 GiB of text in one column: written chunk by chunk
        return table


def _partition_dir(keys: list[str], values: tuple[Any, ...], table: str) -> str:
    parts = []
    for key, value in zip(keys, values, strict=True):
        if value is None or value == "":
            raise CoworkEnvError(f"table {table}: partition column {key} is empty")
        parts.append(f"{key}={quote(str(value), safe='')}")
    return "/".join(parts)


def _partitions(src: Source, spill: Path) -> Iterator[tuple[str, Iterator[pa.Table]]]:
    """(relative directory, its rows) per partition, in ascending key order, source order kept within each."""
    keys = PARTITIONS.get(src.name, [])
    schema = TABLES[src.name]
    if not keys:
        yield "", (t for t in src.rows() if t.num_rows)
        return
    # Arrow IPC streams, not Parquet: a Parquet writer keeps every row group's metadata until it closes, and a spill
    # gets a row group per source batch and partition, so that memory would grow with the table.
    writers: dict[tuple[Any, ...], tuple[str, Path, pa.ipc.RecordBatchStreamWriter]] = {}
    options = pa.ipc.IpcWriteOptions(compression="zstd")
    try:
        for table in src.rows():
            if not table.num_rows:
                continue
            # One filter per partition rather than a sort and `take`: `take` joins a string column's chunks into one
            # array, which overflows past 2 GiB of text; a filter keeps the row order too.
            combos = table.select(keys).group_by(keys, use_threads=False).aggregate([])
            for values in zip(*(combos.column(k).to_pylist() for k in keys), strict=True):
                if values not in writers:
                    path = spill / f"{len(writers)}.arrows"
                    writers[values] = (
                        _partition_dir(keys, values, src.name),
                        path,
                        pa.ipc.new_stream(str(path), schema, options=options),
                    )
                masks = [
                    pc.equal(table.column(k), pa.scalar(v, schema.field(k).type))
                    for k, v in zip(keys, values, strict=True)
                ]
                writers[values][2].write_table(table.filter(functools.reduce(pc.and_, masks)))
    finally:
        for _, _, writer in writers.values():
            writer.close()
    if not writers:
        yield "", iter(())
    for values in sorted(writers):
        directory, path, _ = writers[values]
        yield directory, _spilled(path)


def _spilled(path: Path) -> Iterator[pa.Table]:
    """A spill file's rows, a written piece (at most one source batch) at a time."""
    with pa.OSFile(str(path)) as file:
        for batch in pa.ipc.open_stream(file):
            yield pa.Table.from_batches([batch])


def same_rows(a: Iterator[pa.Table], b: Iterator[pa.Table]) -> bool:
    """Whether two streams hold the same rows in the same order, however each is chunked: compared a slice at a
    time, the rows both current pieces still hold, so that only one piece of each stream is in memory."""
    xs, ys = (t for t in a if t.num_rows), (t for t in b if t.num_rows)
    x, y = next(xs, None), next(ys, None)
    while x is not None and y is not None:
        n = min(x.num_rows, y.num_rows)
        if not x.slice(0, n).equals(y.slice(0, n)):
            return False
        x = x.slice(n) if n < x.num_rows else next(xs, None)
        y = y.slice(n) if n < y.num_rows else next(ys, None)
    return x is None and y is None
