"""Pieces of the release writer that hold for any Arrow data (`data/serialize.py`): text sizes, spills, comparing."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from coworkenv.data import serialize
from coworkenv.data.schemas import TABLES


def test_a_null_list_whose_offsets_span_values_holds_no_text() -> None:
    """Arrow lets a null list's offsets cover values; they count for nothing, as once the list is stored."""
    lists = pa.ListArray.from_arrays(
        pa.array([0, 2, 4, 5], pa.int32()), pa.array(["a", "bb", "ccc", "d", "ee"]), mask=pa.array([False, True, False])
    )
    assert serialize._array_text_bytes(lists).tolist() == [3, 0, 2]
    assert serialize._array_text_bytes(lists.slice(1)).tolist() == [0, 2]
    nested = pa.StructArray.from_arrays([lists], names=["texts"], mask=pa.array([True, False, False]))
    assert serialize._array_text_bytes(nested).tolist() == [0, 0, 2]  # `flatten` pushes the struct's null down


def test_the_rows_of_two_streams_are_compared_however_each_is_chunked() -> None:
    table = pa.table({"n": list(range(10)), "s": [str(i) * i for i in range(10)]})

    def chunks(sizes: list[int], of: pa.Table = table) -> list[pa.Table]:
        starts = [sum(sizes[:i]) for i in range(len(sizes))]
        return [of.slice(start, size) for start, size in zip(starts, sizes, strict=True)]

    assert serialize.same_rows(iter(chunks([3, 0, 7])), iter(chunks([1, 1, 5, 3])))
    assert serialize.same_rows(iter([]), iter([table.slice(0, 0)]))
    assert not serialize.same_rows(iter(chunks([3, 7])), iter(chunks([3, 6])))  # one row short
    changed = table.set_column(1, "s", pa.array([*table["s"].to_pylist()[:9], "x"]))
    assert not serialize.same_rows(iter(chunks([4, 6])), iter(chunks([5, 5], changed)))


def test_a_partition_spill_gives_back_every_piece_in_order(tmp_path: Path) -> None:
    """Spills are Arrow IPC streams: each partition's rows in source order, in ascending key order, whatever pieces
    the source came in (batches of 2 rows here, so a partition gets many)."""
    schema = TABLES["tasks"]
    families = ["b", "a", "b", "c", "a", "b", "b", "a", "c"]
    defaults = {
        "string": "x",
        "int32": 1,
        "int8": 1,
        "int64": 1,
        "double": 0.5,
        "bool": False,
        "list<item: string>": ["x"],
    }
    rows = [
        {f.name: defaults[str(f.type)] for f in schema} | {"task_id": f"t{i}", "family": family}
        for i, family in enumerate(families)
    ]
    staged, spill = tmp_path / "tasks.parquet", tmp_path / "spill"
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), staged, row_group_size=2)
    spill.mkdir()
    spilled = {
        directory: [piece["task_id"].to_pylist() for piece in pieces]
        for directory, pieces in serialize._partitions(serialize.source("tasks", staged, batch_size=2), spill)
    }
    assert list(spilled) == ["family=a", "family=b", "family=c"]
    assert {d: [t for piece in pieces for t in piece] for d, pieces in spilled.items()} == {
        f"family={f}": [f"t{i}" for i, g in enumerate(families) if g == f] for f in "abc"
    }
    assert spilled["family=b"] == [["t0"], ["t2"], ["t5"], ["t6"]]  # a piece per source batch of 2 rows that had some
    assert sorted(p.suffix for p in spill.iterdir()) == [".arrows"] * 3
