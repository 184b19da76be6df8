"""Exports of a release for people outside this ecosystem: Hugging Face `datasets` folders or JSON Lines.

Both write into `out/` one entry per table plus a copy of `manifest.json`, after a full check of the release against its
manifest (`coworkenv.data.integrity`). The export is written in a hidden temporary folder beside `out/`
(`coworkenv.fileio.staged`) and renamed into place once complete (a previous `out/`, with `--overwrite`, is replaced only then): a failure leaves
`out/` as it was.
- `hf`: the layout of `datasets.DatasetDict.save_to_disk`, one split per table: `out/<table>/` and
  `out/dataset_dict.json`, so `datasets.load_from_disk("out")` gives every table and `load_from_disk("out/sft")` one;
- `jsonl`: `out/<table>.jsonl`, one JSON object per row (nested messages stay nested; JSON-string columns stay strings).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Literal

from coworkenv.data.integrity import check_release
from coworkenv.data.layout import Manifest
from coworkenv.data.reader import iter_files, read_manifest, read_table
from coworkenv.data.root import DataRoot, open_root
from coworkenv.data.schemas import TABLES
from coworkenv.errors import CoworkEnvError
from coworkenv.fileio import staged

ExportFormat = Literal["hf", "jsonl"]
FORMATS: tuple[str, ...] = ("hf", "jsonl")
JSONL_BATCH_ROWS = 10_000
HF_SPLITS = "dataset_dict.json"
"""What makes `datasets.load_from_disk(out)` read the folder as a DatasetDict of its tables."""


def _check_target(out: Path, overwrite: bool, root: DataRoot) -> None:
    if out.exists() and not out.is_dir():
        raise CoworkEnvError(f"{out}: exists and is not a directory")
    if out.is_dir() and any(out.iterdir()):
        if not overwrite:
            raise CoworkEnvError(f"{out}: not empty (pass --overwrite to replace its contents)")
        _check_replaceable(out, root)


def _check_replaceable(out: Path, root: DataRoot) -> None:
    """`--overwrite` replaces a previous export and nothing else: a mistyped `--out` (the data root, a release,
    the working directory) must not be deleted for it."""
    if root.local:
        data = Path(os.path.abspath(root.path))
        if out == data or data in out.parents or out in data.parents:
            raise CoworkEnvError(f"{out}: is, holds or lies inside the data root {data}; refusing to replace it")
    strays = sorted(p.name for p in out.iterdir() if not _exported(p))
    if strays or not (out / "manifest.json").is_file():
        why = f"{strays[0]!r} is not a table of one" if strays else "no manifest.json"
        raise CoworkEnvError(f"{out}: not a previous export ({why}); refusing to replace it")


def _exported(entry: Path) -> bool:
    """An entry an export writes: the manifest copy, an `hf` table folder or a `jsonl` table file."""
    if entry.name in ("manifest.json", HF_SPLITS):
        return entry.is_file()
    if entry.is_dir():
        return entry.name in TABLES
    return entry.suffix == ".jsonl" and entry.stem in TABLES


def _export_hf(root: DataRoot, manifest: Manifest, table: str, out: Path) -> None:
    import datasets

    data = read_table(root, manifest.release_id, table)
    # datasets 5.2 saves an empty dataset as zero shards, which load_from_disk cannot read back: force one.
    datasets.Dataset(data).save_to_disk(str(out / table), num_shards=1 if data.num_rows == 0 else None)


def _export_jsonl(root: DataRoot, manifest: Manifest, table: str, out: Path) -> None:
    """Streamed: `JSONL_BATCH_ROWS` rows in memory at a time (docs/design/pipeline.md, "Bounded memory")."""
    with open(out / f"{table}.jsonl", "w", encoding="utf-8") as f:
        for batch in iter_files(root, manifest, table, JSONL_BATCH_ROWS):
            for row in batch.to_pylist():
                f.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")


def export_release(
    data_root: str | os.PathLike[str] | DataRoot | None,
    release: str,
    out: str | os.PathLike[str],
    fmt: str,
    *,
    tables: list[str] | None = None,
    overwrite: bool = False,
) -> Manifest:
    """Export a release (`latest` allowed) to a local folder; returns its manifest."""
    if fmt not in FORMATS:
        raise CoworkEnvError(f"unknown export format {fmt!r}; formats are: {', '.join(FORMATS)}")
    names = list(tables) if tables else list(TABLES)
    unknown = [n for n in names if n not in TABLES]
    if unknown:
        raise CoworkEnvError(f"unknown table(s) {', '.join(unknown)}; tables are: {', '.join(TABLES)}")
    root = open_root(data_root)
    target = Path(os.path.abspath(out))
    _check_target(
        target, overwrite, root
    )  # before the release is read: a refused export touches nothing, not even .verified
    manifest = read_manifest(root, release)
    check_release(
        root, manifest, names, fresh=True
    )  # an export reads every byte anyway: hashing them afresh costs little more
    write = _export_hf if fmt == "hf" else _export_jsonl
    try:
        with staged(target, folder=True) as staging:
            for name in names:
                write(root, manifest, name, staging)
            if fmt == "hf":
                (staging / HF_SPLITS).write_text(json.dumps({"splits": names}) + "\n", encoding="utf-8")
            (staging / "manifest.json").write_text(manifest.model_dump_json(indent=2) + "\n", encoding="utf-8")
    except OSError as exc:
        raise CoworkEnvError(f"{target}: export failed, nothing written ({exc.strerror or exc})") from None
    return manifest
