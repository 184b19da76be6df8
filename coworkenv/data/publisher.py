"""Publishing a release atomically (docs/design/contracts.md, "Releases"): the one writer of releases.

- **Local filesystems** (plain paths, `file://`): the release is written under `releases/.tmp-<id>-<time>-<nonce>/`,
  every file and directory is fsynced, the directory is renamed to `releases/<id>/` (atomic), then `LATEST` is
  moved (`coworkenv.data.latest`: temporary file, fsync, then compare and rename under `releases/.lock`). A crash at
  any point leaves the previous `LATEST` and no partially written release under a final name.
- **Other fsspec filesystems** (`s3://`, `gs://`, `memory://`, …) have no atomic directory rename: the release is
  written under its final name with `manifest.json` written **last**, then `LATEST` is moved by single-object puts
  (atomic on object stores), compared before and verified after (`coworkenv.data.latest`). A directory without
  `manifest.json` is an incomplete release: readers ignore it and the next publish of that run id replaces it.
  `LATEST` only ever names complete releases, and never goes back to an older one once every publisher returned.
- Only task releases (`kind="tasks"`, the default) move `LATEST`, which training reads; a benchmark or eval release
  is published the same way and read by its id.
- Publishing identical tables for a run id again is a no-op (the stored manifest is returned); different tables
  (or another kind) raise `ReleaseConflict`. Temporaries no live writer holds (each writer locks its own) are removed on publish.

`COWORKENV_RELEASE_FAULT=<stage>:exit|pause|wait` (testing only) stops the writer at a stage: `exit` leaves the
process at once, `pause` announces the stage (on stderr, and in the file named by `COWORKENV_RELEASE_FAULT_MARKER`)
and sleeps until killed, `wait` announces it the same way and goes on once the marker file is removed. Stages:
`tmp_created`, `table:<name>` (after each table), `tables_written`, `manifest_written`, `visible` (release complete
under its final name, `LATEST` not yet changed), `latest_temp_written` (local only), `latest_checked` (object stores:
`LATEST` read and found older, not yet written), `published`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

import pyarrow as pa

from coworkenv.data.batches import parquet_batches
from coworkenv.data.claims import claim, clean_stale_tmp, tmp_name
from coworkenv.data.integrity import arrow_fs, check_release, table_files
from coworkenv.data.latest import advance_latest
from coworkenv.data.layout import (
    MANIFEST_FILE,
    RELEASE_KINDS,
    TASKS_KIND,
    FileEntry,
    Manifest,
    ReleaseConflict,
    ReleaseKind,
    content_hash_of,
    release_id_for,
)
from coworkenv.data.reader import complete_manifest
from coworkenv.data.root import RELEASES_DIR, DataRoot, open_root
from coworkenv.data.schemas import TABLES, fingerprint
from coworkenv.data.serialize import (
    ROW_GROUP_SIZE,
    SOURCE_BATCH,
    Source,
    TableSource,
    WrittenFile,
    ordered_rows,
    same_rows,
    source,
    write_table_files,
)
from coworkenv.errors import CoworkEnvError
from coworkenv.fileio import fsync_dir

__all__ = ["ROW_GROUP_SIZE", "TableSource", "code_version", "publish_release"]

MAX_ROWS_PER_FILE = 1_000_000
"""A partition with more rows is split into `part-0`, `part-1`, … files (readers scan them in parallel)."""
CODE_VERSION_ENV = "COWORKENV_CODE_VERSION"
FAULT_ENV = "COWORKENV_RELEASE_FAULT"
FAULT_MARKER_ENV = "COWORKENV_RELEASE_FAULT_MARKER"


def _write_bytes(root: DataRoot, path: str, data: bytes | memoryview) -> None:
    """Write a whole file; on local disks flush it to stable storage before returning."""
    if root.local:
        with open(path, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
    else:
        root.fs.pipe_file(path, bytes(data))


def _fsync_tree(path: str) -> None:
    for dirpath, _dirs, _files in os.walk(path, topdown=False):
        fsync_dir(dirpath)


def _makedirs(root: DataRoot, path: str) -> None:
    root.fs.makedirs(path, exist_ok=True)


def _checkpoint(stage: str) -> None:
    """Testing hook (see the module doc): stop the writer at `stage` when COWORKENV_RELEASE_FAULT asks for it."""
    want = os.environ.get(FAULT_ENV)
    if not want:
        return
    name, _, action = want.rpartition(":") if want.endswith((":exit", ":pause", ":wait")) else (want, "", "exit")
    if name != stage:
        return
    if action == "exit":
        os._exit(86)
    marker = os.environ.get(FAULT_MARKER_ENV)
    if marker:  # written whole, then renamed: a watcher never sees it half-written
        Path(marker + ".tmp").write_text(stage, encoding="utf-8")
        os.replace(marker + ".tmp", marker)
    sys.stderr.write(f"release writer paused at {stage}\n")
    sys.stderr.flush()
    while action != "wait" or not marker or os.path.exists(marker):
        time.sleep(0.02 if action == "wait" else 3600)


@lru_cache(maxsize=1)
def code_version() -> str:
    """`<version>[+g<commit>[.dirty]]`, without paths; the commit only when the package runs from a git checkout.

    `COWORKENV_CODE_VERSION` overrides it (e.g. set at image build time, where there is no git)."""
    import coworkenv

    override = os.environ.get(CODE_VERSION_ENV)
    if override:
        return override

    version = coworkenv.__version__
    package = Path(coworkenv.__file__).resolve().parent

    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(["git", *args], cwd=package, capture_output=True, text=True, timeout=10, check=False)
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    top = git("rev-parse", "--show-toplevel")
    if not top or Path(top).resolve() / "coworkenv" != package:
        return version
    commit = git("rev-parse", "--short=12", "HEAD")
    if not commit:
        return version
    dirty = git("status", "--porcelain", "--untracked-files=no")
    return f"{version}+g{commit}{'.dirty' if dirty else ''}"


def _now() -> datetime:
    return datetime.now(UTC)


class _Durable:
    """A local file written through a buffer, flushed to stable storage when closed."""

    def __init__(self, path: str):
        self.file = open(path, "wb")  # noqa: SIM115 — closed by `close`, which the writer calls

    def write(self, data: Any) -> int:
        return self.file.write(data)

    def close(self) -> None:
        self.file.flush()
        os.fsync(self.file.fileno())
        self.file.close()


def _write_tables(root: DataRoot, target: str, sources: Mapping[str, Source]) -> dict[str, list[FileEntry]]:
    def open_file(relative: str) -> Any:
        path = f"{target}/{relative}"
        _makedirs(root, path.rsplit("/", 1)[0])
        return _Durable(path) if root.local else root.fs.open(path, "wb")

    written: dict[str, list[FileEntry]] = {}
    for name, src in sources.items():
        written[name] = _entries(write_table_files(src, open_file, MAX_ROWS_PER_FILE))
        _checkpoint(f"table:{name}")
    return written


def _entries(files: list[WrittenFile]) -> list[FileEntry]:
    return [FileEntry(path=f.path, rows=f.rows, bytes=f.bytes, sha256=f.sha256) for f in files]


def _json_config(config: Mapping[str, Any] | None) -> dict[str, Any]:
    try:
        return json.loads(json.dumps(dict(config or {}), sort_keys=True, allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise CoworkEnvError(f"release config must be JSON-serializable: {exc}") from None


def publish_release(
    tables: Mapping[str, TableSource],
    *,
    data_root: str | os.PathLike[str] | DataRoot | None = None,
    run_id: str,
    parent: str | None,
    config: Mapping[str, Any] | None,
    kind: ReleaseKind = TASKS_KIND,
) -> Manifest:
    """Publish the tables as release `release_id_for(run_id)` of `kind`; a task release becomes `LATEST`.

    A table is an Arrow table, or the path of a Parquet file holding it (a run's staged table: streamed, so memory
    stays bounded however many rows it has; `coworkenv.data.serialize`). Tables absent from `tables` (or None) are
    written empty. Every table's columns are checked against its schema first; nothing is written if one does not
    fit (null values in a streamed table stop the writing, which then leaves no release behind). Publishing a run id
    whose release already exists returns the stored manifest if the tables and the kind are identical (moving
    `LATEST` to a task release unless a newer one is there) and raises `ReleaseConflict` otherwise.
    """
    if kind not in RELEASE_KINDS:
        raise CoworkEnvError(f"unknown release kind {kind!r}; kinds are: {', '.join(RELEASE_KINDS)}")
    root = open_root(data_root)
    release_id = release_id_for(run_id)
    unknown = sorted(set(tables) - set(TABLES))
    if unknown:
        raise CoworkEnvError(f"unknown table(s) {', '.join(unknown)}; tables are: {', '.join(TABLES)}")
    conformed = {name: source(name, tables.get(name)) for name in TABLES}
    config_json = _json_config(config)
    _makedirs(root, root.releases)
    clean_stale_tmp(root)

    existing = complete_manifest(root, release_id)
    if existing is not None:
        return _republish(root, existing, conformed, kind)

    final = root.join(RELEASES_DIR, release_id)
    held = None
    if root.local:
        target = root.join(RELEASES_DIR, tmp_name(release_id))
        held = claim(root, target, directory=True)
        _checkpoint("tmp_created")
    else:
        target = final
        if root.fs.exists(final):  # an incomplete release left by a writer that died: ours to replace
            root.fs.rm(final, recursive=True)
        _makedirs(root, target)
    try:
        files = _write_tables(root, target, conformed)
        _checkpoint("tables_written")
        manifest = Manifest(
            release_id=release_id,
            run_id=run_id,
            kind=kind,
            parent=parent,
            created_at=_now(),
            code_version=code_version(),
            config=config_json,
            row_counts={n: sum(e.rows for e in entries) for n, entries in files.items()},
            schema_fingerprints={n: fingerprint(TABLES[n]) for n in TABLES},
            content_hashes={n: content_hash_of(e) for n, e in files.items()},
            files=files,
        )
        _write_bytes(root, f"{target}/{MANIFEST_FILE}", manifest.model_dump_json(indent=2).encode("utf-8") + b"\n")
        _checkpoint("manifest_written")
        if root.local:
            _fsync_tree(target)
            try:
                os.rename(target, final)
            except OSError:
                # Another writer published this run id first: identical → no-op, else a conflict.
                other = complete_manifest(root, release_id)
                if other is None:
                    raise CoworkEnvError(
                        f"{final} exists but is not a complete release (no {MANIFEST_FILE}): remove it and publish again"
                    ) from None
                root.fs.rm(target, recursive=True)
                return _republish(root, other, conformed, kind)
            fsync_dir(root.releases)
    except BaseException:
        if root.local and root.fs.exists(target) and target != final:
            root.fs.rm(target, recursive=True)
        raise
    finally:
        if held is not None:
            os.close(held)
    _checkpoint("visible")
    if kind == TASKS_KIND:
        advance_latest(root, manifest, _checkpoint)
    _checkpoint("published")
    return manifest


def _republish(root: DataRoot, existing: Manifest, tables: Mapping[str, Source], kind: ReleaseKind) -> Manifest:
    """The release exists: check that the kind and tables are the same, then make sure `LATEST` has caught up."""
    if existing.kind != kind:
        raise ReleaseConflict(
            f"release {existing.release_id} (run {existing.run_id!r}) already exists as a {existing.kind} release, not {kind}: use a new run id"
        )
    differ = []
    for name, src in tables.items():
        entries = _entries(write_table_files(src, None, MAX_ROWS_PER_FILE))  # hashed, not written
        if existing.content_hashes.get(name) == content_hash_of(entries):
            continue
        # Parquet bytes also depend on the pyarrow version: compare the rows themselves before calling it a conflict.
        if existing.row_counts.get(name) != sum(e.rows for e in entries) or not _stored_equals(
            root, existing, name, src
        ):
            differ.append(name)
    if differ:
        raise ReleaseConflict(
            f"release {existing.release_id} (run {existing.run_id!r}) already exists with different rows in "
            f"{', '.join(differ)}: a rerun of a run id must produce the same tables (use a new run id for new data)"
        )
    if kind == TASKS_KIND:
        advance_latest(root, existing, _checkpoint)
    return existing


def _stored_equals(root: DataRoot, manifest: Manifest, name: str, src: Source) -> bool:
    try:
        check_release(root, manifest, [name])
        fs = arrow_fs(root)
        stored = (
            pa.Table.from_batches([batch])
            for path in table_files(root, manifest, name)
            for batch in parquet_batches(path, SOURCE_BATCH, filesystem=fs)
        )
        return same_rows(stored, ordered_rows(src))
    except (OSError, pa.ArrowException, CoworkEnvError):
        return False
