"""Reading a Parquet file a batch at a time, the batches bounded in bytes as well as rows (docs/design/pipeline.md,
"Bounded memory")."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

BATCH_BYTES = 8 * 1024 * 1024
"""About how many bytes one batch holds, uncompressed, by the file's own row group sizes. Decoding a batch holds two
to three times its size at once: 10,000 rows of a wide table (a task's spec JSON, a trajectory's messages: several
KB each) are 70 MB and took about 400 MB to read; a narrow table keeps its full batches."""
READ_BUFFER = 1024 * 1024
"""Bytes read from the file at a time: pages are decoded as they arrive instead of whole row groups read first."""
UNREADABLE = (OSError, ValueError, pa.ArrowException)
"""What reading damaged Parquet raises: pyarrow's own errors, OSError from the footer's thrift, and a ValueError
(`UnicodeDecodeError` among them) from a footer string or a value that is not what its type says."""


def batch_rows(meta: pq.FileMetaData, max_rows: int) -> int:
    """Rows per batch: at most `max_rows`, and about `BATCH_BYTES` of the file's widest row group's rows."""
    widest = 0.0
    for i in range(meta.num_row_groups):
        group = meta.row_group(i)
        if group.num_rows:
            widest = max(widest, group.total_byte_size / group.num_rows)
    return max(1, min(max_rows, int(BATCH_BYTES / widest))) if widest else max(1, max_rows)


def parquet_batches(path: str | os.PathLike[str], max_rows: int, *, filesystem: Any = None) -> Iterator[pa.RecordBatch]:
    """The file's rows in order, at most `max_rows` and about `BATCH_BYTES` a batch (`batch_rows`). Each batch is
    validated in full (UTF-8 of its strings, offsets within bounds): a flipped byte in a page whose checksum is absent
    decodes into a batch that fails later, in whatever converts it, instead of here as an unreadable file."""
    file = pq.ParquetFile(path, filesystem=filesystem, pre_buffer=False, buffer_size=READ_BUFFER)
    for batch in file.iter_batches(batch_size=batch_rows(file.metadata, max_rows), use_threads=False):
        batch.validate(full=True)
        yield batch
