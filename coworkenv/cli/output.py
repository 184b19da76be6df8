"""Tables on stdout as a terminal, a log and a program each want them (docs/design/pipeline.md, "Running": the command's contract).

A terminal gets a rich table sized to it. Anywhere else (a pipe, a file, an Airflow task log) rich would assume 80
columns and cut ids to `r…` or wrap a word per line, so the console is made wide enough never to: every value whole
(`COLUMNS`, when set, still wins).
Commands that print a table take `--format`: `table`, `plain` (tab-separated, a header line; tabs and line breaks
inside values become spaces) or `json` (a list of objects, values as they are).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from typing import Annotated, Any

import typer

from coworkenv.errors import CoworkEnvError

FORMATS = ("table", "plain", "json")
UNWRAPPED_WIDTH = 100_000
"""Columns of a console that is not a terminal: wider than any row, so nothing is cut or wrapped."""

FormatOpt = Annotated[
    str,
    typer.Option(
        "--format", help="table (whole values when not a terminal), plain (tab-separated, a header line) or json."
    ),
]


def console(stderr: bool = False) -> Any:
    """A rich console: the terminal's, or, in a pipe or a log, one that never cuts or wraps a line."""
    from rich.console import Console

    found = Console(stderr=stderr)
    if found.is_terminal or os.environ.get("COLUMNS"):  # a width asked for wins
        return found
    return Console(stderr=stderr, width=UNWRAPPED_WIDTH)


def rule(out: Any, title: str) -> None:
    """A section heading: rich's rule across a terminal; in a pipe or a log (an unwrapped console) a line of its own
    length, not one of `UNWRAPPED_WIDTH` characters."""
    if out.width >= UNWRAPPED_WIDTH:
        out.print(f"── {title} ──")
    else:
        out.rule(title)


def print_rows(
    columns: Sequence[str], rows: Sequence[Sequence[Any]], fmt: str = "table", *, title: str | None = None
) -> None:
    """Rows under their column names, in `fmt` (one of `FORMATS`)."""
    if fmt not in FORMATS:
        raise CoworkEnvError(f"--format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    if fmt == "json":
        sys.stdout.write(
            json.dumps([dict(zip(columns, row, strict=True)) for row in rows], indent=2, ensure_ascii=False) + "\n"
        )
    elif fmt == "plain":
        for line in [columns, *rows]:
            sys.stdout.write("\t".join(_plain(v) for v in line) + "\n")
    else:
        from rich.table import Table
        from rich.text import Text

        table = Table(*columns, title=title, title_justify="left")
        for row in rows:
            table.add_row(*(Text(_plain(v)) for v in row))  # Text: a value is never read as rich markup
        console().print(table)


def _plain(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return "" if value is None else " ".join(str(value).split("\t")).replace("\r\n", " ").replace("\n", " ")
