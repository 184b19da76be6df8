"""Reading Parquet files in batches bounded in bytes as well as rows (coworkenv/data/batches.py)."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq

from coworkenv.data.batches import BATCH_BYTES, batch_rows, parquet_batches


def _write(path, rows: int, text_bytes: int, row_group_size: int) -> pa.Table:
    table = pa.table({"i": list(range(rows)), "text": [f"{i:06d}" + "x" * text_bytes for i in range(rows)]})
    pq.write_table(table, path, row_group_size=row_group_size)
    return table


def test_wide_rows_come_in_batches_of_about_batch_bytes_and_every_row_comes_once_in_order(tmp_path):
    path = tmp_path / "wide.parquet"
    table = _write(path, 600, 100_000, 250)  # 60 MB of text, row groups of 25 MB
    rows = batch_rows(pq.ParquetFile(path).metadata, 10_000)
    assert BATCH_BYTES // 100_000 // 2 <= rows <= BATCH_BYTES // 100_000
    batches = list(parquet_batches(path, 10_000))
    assert max(b.num_rows for b in batches) == rows and len(batches) >= 600 // rows
    assert pa.Table.from_batches(batches).equals(table)


def test_narrow_rows_keep_the_row_limit_and_an_empty_file_reads_as_nothing(tmp_path):
    narrow = tmp_path / "narrow.parquet"
    table = _write(narrow, 5_000, 10, 5_000)
    assert batch_rows(pq.ParquetFile(narrow).metadata, 1_000) == 1_000
    assert [b.num_rows for b in parquet_batches(narrow, 1_000)] == [1_000] * 5
    assert pa.Table.from_batches(list(parquet_batches(narrow, 7))).equals(table)
    empty = tmp_path / "empty.parquet"
    pq.write_table(table.slice(0, 0), empty)
    assert batch_rows(pq.ParquetFile(empty).metadata, 10_000) == 10_000 and list(parquet_batches(empty, 10_000)) == []
