"""Run directories as the pages show them: what kind of run, whether its gates passed, its Data Docs and reports, its
release; and the one check that turns a URL into a file the pages may serve.

A run's gates passed when `quality/passed.json` exists (the gate stage writes it last, after every stage's suite held).
Data Docs without it mean the gate failed (or is running again right now): `GateFailed` leaves the docs and no record.
Data Docs are found by globbing for `index.html` under `quality/`, so the layout of the docs may change under it.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from coworkenv.data.layout import Manifest
from coworkenv.data.root import Root, local_path
from coworkenv.errors import CoworkEnvError
from coworkenv.pipeline.evaluation import EVAL_DIR, REPORT_DIR
from coworkenv.pipeline.rundir import GATES_PASSED, NIGHTLY_DIR, RUN_ID_CHARS, RUNS_DIR, safe_name

QUALITY_DIR = GATES_PASSED[0]
SERVED = (QUALITY_DIR, REPORT_DIR, f"{NIGHTLY_DIR}/{REPORT_DIR}")
"""The folders of a run whose files the pages serve: Data Docs and reports. Nothing else of a run leaves the server."""
CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".json": "application/json",
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".gif": "image/gif",
    ".svg": "image/svg+xml",
    ".ico": "image/x-icon",
    ".woff": "font/woff",
    ".woff2": "font/woff2",
    ".ttf": "font/ttf",
    ".otf": "font/otf",
    ".eot": "application/vnd.ms-fontobject",
}
RUN_NAME = re.compile(rf"^[A-Za-z0-9{re.escape(RUN_ID_CHARS)}]{{1,255}}$")
"""A run directory's name: `safe_name` leaves only these characters."""

RunKind = Literal["synthesis", "evaluation", "nightly", "other"]
GateStatus = Literal["passed", "failed", "not gated"]


class NotFound(CoworkEnvError):
    """What a URL names does not exist, or is not something the pages serve (the app answers 404)."""


class DocsLink(BaseModel):
    model_config = ConfigDict(frozen=True)

    stage: str
    path: str
    """Relative to the run directory, e.g. `quality/data_docs/validated/index.html`."""


class ReportLink(BaseModel):
    model_config = ConfigDict(frozen=True)

    kind: Literal["evaluation", "comparison"]
    path: str
    """The report's `report.html`, relative to the run directory."""
    plots: list[str] = []
    """Its PNG plots, relative to the run directory."""


class RunInfo(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    """The run directory's name (`safe_name` of the run id)."""
    run_id: str
    """The run id where a release records it, else the directory's name."""
    kind: RunKind
    gate: GateStatus
    passed_stages: list[str] = []
    docs: list[DocsLink] = []
    reports: list[ReportLink] = []
    release_id: str | None = None
    modified: datetime


def runs_path(data_root: Root) -> Path | None:
    """`<data root>/runs`, or None where the data root is not local (run directories need a local one)."""
    try:
        return local_path(data_root, "run directories") / RUNS_DIR
    except CoworkEnvError:
        return None


def run_path(data_root: Root, name: str) -> Path:
    """The run directory `name`, refused unless it is a plain directory name of an existing run."""
    base = runs_path(data_root)
    if base is None or not RUN_NAME.match(name) or name in (".", ".."):
        raise NotFound(f"no run {name!r}")
    path = base / name
    if not path.is_dir() or not path.resolve().is_relative_to(base.resolve()):
        raise NotFound(f"no run {name!r}")
    return path


def _kind(path: Path) -> RunKind:
    if (path / NIGHTLY_DIR / "config.json").is_file():
        return "nightly"
    if (path / EVAL_DIR / "config.json").is_file():
        return "evaluation"
    if (path / "config.json").is_file():
        return "synthesis"
    return "other"


def data_docs(path: Path) -> list[DocsLink]:
    """Each Data Docs site under the run's `quality/`: an `index.html` with no other site's index above it."""
    quality = path / QUALITY_DIR
    indexes = sorted(quality.rglob("index.html"), key=lambda p: (len(p.parts), str(p))) if quality.is_dir() else []
    sites: list[Path] = []
    for index in indexes:
        if not any(index.parent.is_relative_to(site) for site in sites):
            sites.append(index.parent)
    return sorted(
        (DocsLink(stage=site.name, path=(site / "index.html").relative_to(path).as_posix()) for site in sites),
        key=lambda d: d.stage,
    )


def reports(path: Path) -> list[ReportLink]:
    found = []
    for folder in SERVED[1:]:
        html = path / folder / "report.html"
        if html.is_file():
            kind = "comparison" if (html.parent / "comparison.json").is_file() else "evaluation"
            plots = [p.relative_to(path).as_posix() for p in sorted(html.parent.glob("*.png"))]
            found.append(ReportLink(kind=kind, path=html.relative_to(path).as_posix(), plots=plots))
    return found


def _passed_stages(path: Path) -> list[str] | None:
    from coworkenv.fileio import read_json

    record = path.joinpath(*GATES_PASSED)
    if not record.is_file():
        return None
    try:
        data = read_json(record)
    except CoworkEnvError:
        return []
    stages = data.get("stages") if isinstance(data, dict) else None
    return [str(s) for s in stages] if isinstance(stages, list) else []


def _info(path: Path, by_dir: dict[str, Manifest]) -> RunInfo:
    stages = _passed_stages(path)
    docs = data_docs(path)
    gate: GateStatus = "passed" if stages is not None else ("failed" if docs else "not gated")
    manifest = by_dir.get(path.name)
    return RunInfo(
        name=path.name,
        run_id=manifest.run_id if manifest else path.name,
        kind=_kind(path),
        gate=gate,
        passed_stages=stages or [],
        docs=docs,
        reports=reports(path),
        release_id=manifest.release_id if manifest else None,
        modified=datetime.fromtimestamp(path.stat().st_mtime, UTC),
    )


def by_directory(manifests: list[Manifest]) -> dict[str, Manifest]:
    """Releases by the directory name of the run that published them."""
    return {safe_name(m.run_id): m for m in manifests}


def list_runs(data_root: Root, manifests: list[Manifest]) -> list[RunInfo]:
    """Every run directory, newest first."""
    base = runs_path(data_root)
    if base is None or not base.is_dir():
        return []
    by_dir = by_directory(manifests)
    runs = [_info(p, by_dir) for p in base.iterdir() if p.is_dir() and RUN_NAME.match(p.name)]
    return sorted(runs, key=lambda r: (r.modified, r.name), reverse=True)


def run_info(data_root: Root, name: str, manifests: list[Manifest]) -> RunInfo:
    return _info(run_path(data_root, name), by_directory(manifests))


def runs_of(data_root: Root, run_id: str, manifests: list[Manifest]) -> list[RunInfo]:
    """An Airflow run's directory and those of the runs it started (the nightly loop's `<run id>.<stage>`)."""
    base = runs_path(data_root)
    if base is None or not base.is_dir():
        return []
    name = safe_name(run_id)
    by_dir = by_directory(manifests)
    found = [p for p in base.iterdir() if p.is_dir() and (p.name == name or p.name.startswith(name + "."))]
    return [_info(p, by_dir) for p in sorted(found, key=lambda p: (p.name != name, p.name))]


def served_file(data_root: Root, name: str, relative: str) -> tuple[Path, str]:
    """The file `relative` of run `name` with its content type, if it lies in a served folder (`SERVED`) and has a
    served suffix. Anything else — `..`, absolute paths, links that lead out of the folder, other files — is NotFound."""
    path = run_path(data_root, name)
    parts = relative.split("/")
    if not relative or "\\" in relative or "\x00" in relative or any(part in ("", ".", "..") for part in parts):
        raise NotFound(f"no file {relative!r} in run {name!r}")
    folder = next((f for f in SERVED if relative.startswith(f + "/")), None)
    content_type = CONTENT_TYPES.get(Path(relative).suffix.lower())
    if folder is None or content_type is None:
        raise NotFound(f"run {name!r}: {relative!r} is not a report or Data Docs file")
    target = (path / relative).resolve()
    inside = target.is_relative_to((path / folder).resolve()) and target.is_relative_to(path.resolve())
    if not inside or not target.is_file():
        raise NotFound(f"no file {relative!r} in run {name!r}")
    return target, content_type
