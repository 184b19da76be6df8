"""Dataset commands: list releases, export one (HF datasets folders or JSON Lines)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from coworkenv.cli.app import app
from coworkenv.cli.output import FormatOpt, print_rows

DataRootOpt = Annotated[
    str | None,
    typer.Option("--data-root", help="Data root: a path or fsspec URL (default: $COWORKENV_DATA_ROOT, else ./data)."),
]


@app.command("releases")
def releases_command(data_root: DataRootOpt = None, fmt: FormatOpt = "table") -> None:
    """List the complete releases, oldest first, with their kind and row counts (`latest`: LATEST names it, the newest task release)."""
    from coworkenv.data.reader import latest_release, list_releases
    from coworkenv.data.root import open_root
    from coworkenv.data.schemas import TABLES

    root = open_root(data_root)
    manifests = list_releases(root)
    if not manifests and fmt == "table":
        typer.echo(f"no releases under {root.url}")
        return
    latest = latest_release(root)
    rows = [
        (
            m.release_id,
            m.kind,
            m.release_id == latest,
            m.created_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
            m.parent or "",
            *(m.row_counts.get(name) for name in TABLES),
        )
        for m in manifests
    ]
    print_rows(
        ("release", "kind", "latest", "created", "parent", *TABLES), rows, fmt, title=f"releases under {root.url}"
    )


@app.command("export")
def export_command(
    release: Annotated[str, typer.Option("--release", help="Release id, or `latest`.")],
    fmt: Annotated[
        str, typer.Option("--format", help="hf (datasets.save_to_disk folders) or jsonl (one file per table).")
    ],
    out: Annotated[Path, typer.Option("--out", help="Output directory.")],
    data_root: DataRootOpt = None,
    tables: Annotated[
        list[str] | None, typer.Option("--table", help="Only these tables (repeatable; default: all).")
    ] = None,
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Replace a previous export in --out (never anything else).")
    ] = False,
) -> None:
    """Export a release for use outside CoworkEnv."""
    from coworkenv.data.export import export_release

    manifest = export_release(data_root, release, out, fmt, tables=tables, overwrite=overwrite)
    total = sum(manifest.row_counts.get(t, 0) for t in (tables or manifest.row_counts))
    typer.echo(f"exported {manifest.release_id} ({total} rows) as {fmt} → {out}")
