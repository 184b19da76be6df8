"""The `sql` command: DuckDB SQL over published releases, with the views of `sql/` loaded, or their column tests."""

from __future__ import annotations

import csv
import datetime as dt
import decimal
import json
import math
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from coworkenv.cli.app import app
from coworkenv.data.sql_limits import QueryLimits
from coworkenv.errors import CoworkEnvError
from coworkenv.fileio import read_text

FORMATS = ("table", "csv", "json")
MIB = 1024 * 1024
_LIMIT = QueryLimits.model_fields
_OPTION_OF = {"timeout_s": "--timeout", "max_rows": "--max-result-rows", "max_bytes": "--max-result-mb"}


def _plain(value: Any) -> Any:
    """A JSON-ready value: NaN/inf → null, decimals → float, dates → ISO 8601, bytes → hex."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return value.total_seconds()
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _cell(value: Any) -> str:
    """Text for csv and table cells: nested values as JSON, booleans lowercase, floats without noise."""
    value = _plain(value)
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:.6f}".rstrip("0").rstrip(".") if abs(value) < 1e12 else repr(value)
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return str(value)


def _rows(table: Any) -> list[dict[str, Any]]:
    return table.to_pylist()


def write_csv(table: Any) -> None:
    writer = csv.writer(sys.stdout, lineterminator="\n")
    writer.writerow(table.column_names)
    for row in _rows(table):
        writer.writerow([_cell(v) for v in row.values()])


def write_json(table: Any) -> None:
    rows = [json.dumps(_plain(row), ensure_ascii=False) for row in _rows(table)]
    sys.stdout.write("[\n" + ",\n".join(rows) + "\n]\n" if rows else "[]\n")


def write_table(table: Any, max_rows: int) -> None:
    import pyarrow as pa
    from rich.table import Table
    from rich.text import Text

    from coworkenv.cli.output import console as make_console

    view = Table()
    for f in table.schema:
        numeric = pa.types.is_integer(f.type) or pa.types.is_floating(f.type) or pa.types.is_decimal(f.type)
        view.add_column(Text(f.name), justify="right" if numeric else "left")
    for row in _rows(table.slice(0, max_rows)):
        view.add_row(*(Text("null", style="dim") if v is None else Text(_cell(v)) for v in row.values()))
    console = make_console()  # on a terminal the table fits the window; piped, it keeps every column whole
    console.print(view)
    shown = min(max_rows, table.num_rows)
    note = f"{table.num_rows} row{'s' if table.num_rows != 1 else ''}"
    if shown < table.num_rows:
        note += f", first {shown} shown (--max-rows, or --format csv/json for all)"
    typer.echo(note, err=True)


@app.command("sql")
def sql(
    statement: Annotated[str | None, typer.Argument(help="SQL to run (or use --file).", show_default=False)] = None,
    file: Annotated[
        Path | None, typer.Option("--file", "-f", help="Read the SQL from this file, e.g. sql/queries/x.sql.")
    ] = None,
    release: Annotated[
        str,
        typer.Option(
            help="Release to query: latest, all (adds every release, told apart by release_id), or a release id."
        ),
    ] = "latest",
    fmt: Annotated[str, typer.Option("--format", help="Output format: table, csv or json.")] = "table",
    data_root: Annotated[
        str | None, typer.Option(help="Data root holding releases/ (default: $COWORKENV_DATA_ROOT, else ./data).")
    ] = None,
    max_rows: Annotated[int, typer.Option(min=1, help="Rows shown by --format table.")] = 200,
    test: Annotated[
        bool,
        typer.Option(
            "--test",
            help="Run the column tests of sql/*/schema.yml over the release instead of a query (exit code 1 if one fails).",
        ),
    ] = False,
    verify: Annotated[
        bool,
        typer.Option(
            "--verify",
            help="Hash every file of the release again (files hashed before are otherwise known by size, time and inode).",
        ),
    ] = False,
    memory_limit: Annotated[str, typer.Option(help=_LIMIT["memory_limit"].description)] = _LIMIT[
        "memory_limit"
    ].default,
    threads: Annotated[int | None, typer.Option(help=_LIMIT["threads"].description)] = None,
    timeout: Annotated[float, typer.Option(help=_LIMIT["timeout_s"].description)] = _LIMIT["timeout_s"].default,
    max_result_rows: Annotated[int, typer.Option(help=_LIMIT["max_rows"].description + " More is an error.")] = _LIMIT[
        "max_rows"
    ].default,
    max_result_mb: Annotated[
        float, typer.Option(help="Most MiB a result may take in memory; more is an error.")
    ] = _LIMIT["max_bytes"].default / MIB,
) -> None:
    """Query releases with DuckDB: src_* tables, staging (stg_*), intermediate and mart views from sql/ (`SHOW TABLES` lists them).

    The release is checked against its manifest first; the SQL runs read-only, under the limits below."""
    from coworkenv.data.catalog import run_query
    from coworkenv.data.sql_engine import catalog_connection, engine

    if fmt not in FORMATS:
        raise CoworkEnvError(f"--format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    limits = query_limits(memory_limit, threads, timeout, max_result_rows, max_result_mb)
    if test:
        if statement is not None or file is not None:
            raise CoworkEnvError(
                "--test runs the column tests of sql/*/schema.yml: give no SQL statement or --file with it"
            )
        run_column_tests(data_root, release, limits=limits, verify=verify)
        return
    if (statement is None) == (file is None):
        raise CoworkEnvError("give either a SQL statement or --file FILE (not both)")
    if file is not None:
        statement = read_text(file)
    with catalog_connection(engine(release, data_root, limits=limits, verify=verify)) as con:
        result = run_query(con, statement or "", limits)
    if fmt == "csv":
        write_csv(result)
    elif fmt == "json":
        write_json(result)
    else:
        write_table(result, max_rows)


def query_limits(
    memory_limit: str, threads: int | None, timeout: float, max_result_rows: int, max_result_mb: float
) -> QueryLimits:
    """The command's limit options as `QueryLimits`; a bad value is named by its option."""
    from pydantic import ValidationError

    for option, value in (("--timeout", timeout), ("--max-result-mb", max_result_mb)):
        if not math.isfinite(value):
            raise CoworkEnvError(f"{option}: must be a finite number, not {value}")
    given = {
        "memory_limit": memory_limit,
        "timeout_s": timeout,
        "max_rows": max_result_rows,
        "max_bytes": int(max_result_mb * MIB),
    }
    try:
        return QueryLimits(**given, **({"threads": threads} if threads is not None else {}))
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        field = str(first["loc"][0]) if first.get("loc") else "memory_limit"
        option = _OPTION_OF.get(field, "--" + field.replace("_", "-"))
        raise CoworkEnvError(f"{option}: {str(first['msg']).removeprefix('Value error, ')}") from None


def run_column_tests(
    data_root: str | None, release: str, *, limits: QueryLimits | None = None, verify: bool = False
) -> None:
    """`--test`: each failing test on one stderr line and exit code 1, else a one-line summary (None: the default root)."""
    from coworkenv.data.sql_engine import catalog_connection, engine
    from coworkenv.data.sql_tests import load_tests, run_tests

    tests = load_tests()  # a broken schema file is reported before any release is read
    with catalog_connection(engine(release, data_root, limits=limits, verify=verify)) as con:
        failures = run_tests(con, tests)
    for failure in failures:
        typer.echo(failure.line(), err=True)
    views = len({t.view for t in tests})
    if failures:
        typer.echo(f"{len(failures)} of {len(tests)} column tests failed ({views} views, release {release})")
        raise typer.Exit(1)
    typer.echo(f"{len(tests)} column tests passed ({views} views, release {release})")
