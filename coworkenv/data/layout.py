"""The release layout (docs/design/contracts.md, "Releases"; a contract) and its manifest.

```
<data root>/releases/<release_id>/manifest.json
<data root>/releases/<release_id>/<table>/[<key>=<value>/]part-<n>.parquet
<data root>/releases/LATEST                 the id of the newest complete task release
```

A release has a kind (`Manifest.kind`): `tasks` (what the factory publishes and training reads), `benchmark` (a
held-out suite, `coworkenv-bench`) or `eval`. Only task releases move `LATEST`; the others are read by id.

The release id is a pure function of the run id (`release_id_for`): `r-<slug of the run id>-<first 8 hex of
sha256(run id)>`, so a rerun of the same run id targets the same release.
"""

from __future__ import annotations

import hashlib
import re
from datetime import UTC, datetime
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, field_serializer, field_validator, model_validator

from coworkenv.errors import CoworkEnvError

LATEST_FILE = "LATEST"
MANIFEST_FILE = "manifest.json"
TMP_PREFIX = ".tmp-"
LOCK_FILE = ".lock"
"""`releases/.lock`: held briefly while a writer claims a temporary name or a publisher removes orphaned ones."""
FORMAT_VERSION = 1
RELEASE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$")
ReleaseKind = Literal["tasks", "benchmark", "eval"]
DEFAULT_LINEAGE = "synthesis"
"""The release line of a task release whose config names none (`lineage`): the synthesis job's own runs."""
RELEASE_KINDS: tuple[str, ...] = get_args(ReleaseKind)
TASKS_KIND: ReleaseKind = "tasks"
"""The kind `LATEST` follows: training reads the newest task release."""


class ReleaseConflict(CoworkEnvError):
    """The run id's release exists with different table contents."""


class FileEntry(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    path: str
    """Relative to the release directory, e.g. `tasks/family=mail_triage/part-0.parquet`."""
    rows: int
    bytes: int
    sha256: str

    @field_validator("path")
    @classmethod
    def _inside_the_release(cls, path: str) -> str:
        """A damaged or hand-edited manifest must not point a reader outside its release (or at an impossible name)."""
        parts = path.split("/")
        if (
            "\x00" in path
            or path.startswith("/")
            or any(part in ("", ".", "..") for part in parts)
            or not path.endswith(".parquet")
        ):
            raise ValueError(f"{path!r} is not a Parquet file inside the release")
        return path


class Manifest(BaseModel):
    """`manifest.json`: what a release holds and where it came from."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    format_version: int = FORMAT_VERSION
    release_id: str
    run_id: str
    kind: ReleaseKind = TASKS_KIND
    """`tasks` (training data: only these move `LATEST`), `benchmark` (a held-out suite) or `eval`; absent: `tasks`."""
    parent: str | None
    created_at: datetime
    code_version: str
    """`coworkenv.__version__` plus `+g<git commit>[.dirty]` when the code runs from a git checkout."""
    config: dict[str, Any]
    row_counts: dict[str, int]
    schema_fingerprints: dict[str, str]
    content_hashes: dict[str, str]
    """Per table: sha256 over its files' relative paths and sha256s, in order."""
    files: dict[str, list[FileEntry]]
    """Per table: its Parquet files, in read order."""

    @field_validator("release_id")
    @classmethod
    def _release_name(cls, value: str | None) -> str | None:
        if value is not None and not RELEASE_NAME.match(value):
            raise ValueError(f"{value!r} is not a release id")
        return value

    @field_validator("files")
    @classmethod
    def _table_names(cls, files: dict[str, list[FileEntry]]) -> dict[str, list[FileEntry]]:
        for table in files:
            if not RELEASE_NAME.match(table):
                raise ValueError(f"{table!r} is not a table name")
        return files

    @model_validator(mode="after")
    def _consistent(self) -> Manifest:
        """Every table in each per-table map, and each content hash that of its file list: a key renamed or dropped
        by hand is a damaged manifest, never a default (an empty hash list would check nothing)."""
        tables = set(self.files)
        for field in ("row_counts", "schema_fingerprints", "content_hashes"):
            other = set(getattr(self, field))
            if other != tables:
                odd = sorted(other ^ tables)[0]
                raise ValueError(f"{field} and files name different tables ({odd!r} is in one only)")
        for table, entries in self.files.items():
            if self.content_hashes[table] != content_hash_of(entries):
                raise ValueError(f"content_hashes[{table!r}] is not the hash of its file list")
        return self

    @field_serializer("created_at")
    def _utc_text(self, value: datetime) -> str:
        """Always `YYYY-MM-DDTHH:MM:SS.ffffffZ`, so that manifests sort by time as text too."""
        return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def release_id_for(run_id: str) -> str:
    """`r-<slug>-<hash8>`: readable, filesystem-safe and a pure function of the run id."""
    if not isinstance(run_id, str) or not run_id.strip():
        raise CoworkEnvError("a release needs a non-empty run id")
    slug = re.sub(r"[^a-z0-9]+", "-", run_id.lower()).strip("-")[:48].strip("-")
    digest = hashlib.sha256(run_id.encode("utf-8")).hexdigest()[:8]
    return f"r-{slug}-{digest}" if slug else f"r-{digest}"


def content_hash_of(entries: list[FileEntry]) -> str:
    """A table's content hash: sha256 over its files' relative paths and sha256s, in order."""
    text = "".join(f"{e.path}\0{e.sha256}\n" for e in entries)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
