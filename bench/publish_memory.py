"""Peak memory of publishing one wide staged table, with and without the row groups' byte cut.

Method: write a staged `tasks` table of `--rows` rows (each with `--spec-kb` KB of spec JSON, 5 families, so 5
partitions) to a temporary Parquet file, then, in a fresh process per mode, stream it through
`data.serialize.write_table_files` as `publish` does, hashing the release files without writing them, and report
that process's peak RSS (`ru_maxrss`). Modes: `byte cut` (the default `ROW_GROUP_BYTES`) and `rows only` (the
cut disabled: row groups of `ROW_GROUP_SIZE` rows whatever their size, as before it existed). The calibration
(bench/_common.py) is measured in this process and the seconds are also given in k calib.

    python bench/publish_memory.py                          # 150,000 and 600,000 rows of 7 KB
    python bench/publish_memory.py --rows 50000 --json
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
BENCH = Path(__file__).resolve().parent
for path in (str(REPO), str(BENCH)):
    if path not in sys.path:
        sys.path.insert(0, path)

from _common import calibrated_s, calibration, calibration_line, machine_info  # noqa: E402

CHILD = """
import json, resource, sys, time
from coworkenv.data import serialize
if sys.argv[2] == "rows only":
    serialize.ROW_GROUP_BYTES = 1 << 62
start = time.perf_counter()
files = serialize.write_table_files(serialize.source("tasks", sys.argv[1]), None, 1_000_000)
print(json.dumps({"files": len(files), "rows": sum(f.rows for f in files), "seconds": time.perf_counter() - start,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def staged_tasks(path: Path, rows: int, spec_kb: int) -> int:
    """A staged `tasks` table of synthetic rows; returns the bytes of spec JSON it holds."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from coworkenv.data.schemas import TABLES

    schema, filler = TABLES["tasks"], "y" * (spec_kb * 1000)

    def column(field: Any, start: int, n: int) -> Any:
        kind, ids = field.type, range(start, start + n)
        if field.name == "spec_json":
            return pa.array([f'{{"id": "t{i}", "text": "{filler}"}}' for i in ids], kind)
        if field.name == "family":
            return pa.array([f"family{i % 5}" for i in ids], kind)
        if pa.types.is_string(kind):
            return pa.array([f"{field.name}-{i}" for i in ids], kind)
        if pa.types.is_integer(kind):
            return pa.array([i % 5 + 1 for i in ids], kind)
        if pa.types.is_floating(kind):
            return pa.array([0.5] * n, kind)
        if pa.types.is_boolean(kind):
            return pa.array([True] * n, kind)
        if pa.types.is_list(kind):
            return pa.array([["a", "b"]] * n, kind)
        raise SystemExit(f"publish_memory: no synthetic value for column {field.name} ({kind})")

    with pq.ParquetWriter(path, schema) as writer:
        for start in range(0, rows, 10_000):
            writer.write_table(pa.table([column(f, start, min(10_000, rows - start)) for f in schema], schema=schema))
    return rows * len(filler)


def run(sizes: list[int], spec_kb: int) -> dict[str, Any]:
    calib = calibration()
    results = []
    with tempfile.TemporaryDirectory(prefix="coworkenv-publish-memory-") as tmp:
        for rows in sizes:
            path = Path(tmp) / f"tasks-{rows}.parquet"
            text = staged_tasks(path, rows, spec_kb)
            for mode in ("rows only", "byte cut"):
                done = subprocess.run(
                    [sys.executable, "-c", CHILD, str(path), mode], cwd=REPO, capture_output=True, text=True, check=True
                )
                out = json.loads(done.stdout)
                results.append(
                    {
                        "rows": rows,
                        "text_mb": text / 1e6,
                        "mode": mode,
                        **out,
                        "seconds_k_calib": calibrated_s(out["seconds"], calib),
                    }
                )
            path.unlink()
    return {
        "benchmark": "publish_memory",
        "machine": machine_info(None),
        "calibration": calib,
        "spec_kb": spec_kb,
        "results": results,
    }


def markdown(result: dict[str, Any]) -> str:
    m = result["machine"]
    lines = [
        f"Machine: {m['cpu']} ({m['logical_cpus']} logical CPUs), {m['implementation']} {m['python']}, {m['platform']}",
        calibration_line(result["calibration"]),
        "",
        "| rows | spec JSON | mode | peak RSS MB | seconds | seconds in k calib | files |",
        "|---:|---:|---|---:|---:|---:|---:|",
    ]
    for r in result["results"]:
        lines.append(
            f"| {r['rows']:,} | {r['text_mb']:,.0f} MB | {r['mode']} | {r['peak_rss_mb']:,.0f} | {r['seconds']:.1f} | "
            f"{r['seconds_k_calib']:,.0f} | {r['files']} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="150000,600000", help="comma-separated table sizes (default 150000,600000)")
    parser.add_argument("--spec-kb", type=int, default=7, help="KB of spec JSON per row (default 7)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of markdown")
    args = parser.parse_args(argv)
    try:
        sizes = [int(x) for x in args.rows.split(",") if x.strip()]
    except ValueError:
        parser.error(f"--rows: not a list of integers: {args.rows!r}")
    if not sizes or min(sizes) < 1 or args.spec_kb < 1:
        parser.error("--rows must be positive integers and --spec-kb at least 1")
    started = time.perf_counter()
    result = run(sizes, args.spec_kb)
    result["total_seconds"] = time.perf_counter() - started
    print(json.dumps(result, indent=2) if args.json else markdown(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
