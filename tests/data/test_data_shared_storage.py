"""Several publishers on one data root, locally and on a non-local fsspec filesystem (`memory://`, written in place
with the manifest last): every release completes, `LATEST` names one of them and never goes back to an older one,
and no file is torn.

Interleavings are forced, not hoped for: a publisher thread is held at a stage of the publisher's fault hook
(`_checkpoint`) while another publishes, and on local disks real processes are held with
`COWORKENV_RELEASE_FAULT=<stage>:wait` (see `coworkenv.data.publisher`).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pyarrow as pa
import pytest

import coworkenv.data.publisher as publisher
from coworkenv.data.layout import LATEST_FILE, TMP_PREFIX, release_id_for
from coworkenv.data.publisher import FAULT_ENV, FAULT_MARKER_ENV, publish_release
from coworkenv.data.reader import latest_release, list_releases, read_table, verify_release
from coworkenv.data.root import open_root
from coworkenv.data.schemas import TABLES
from tests.support import ROOT
from tests.support.releases import sorted_rows

WRITER = """
import sys
import pyarrow as pa
from coworkenv.data.publisher import publish_release

root, arrow_file, run_id = sys.argv[1:4]
tasks = pa.ipc.open_file(pa.memory_map(arrow_file)).read_all()
print(publish_release({"tasks": tasks}, data_root=root, run_id=run_id, parent=None, config={"run": run_id}).release_id)
"""


@pytest.fixture(params=["local", "memory"])
def root(request, tmp_path) -> str:
    return str(tmp_path / "data") if request.param == "local" else f"memory://coworkenv-{uuid.uuid4().hex}/data"


@pytest.fixture
def tasks(tables) -> pa.Table:
    return tables["tasks"]


def publish(root: str, tasks: pa.Table, run_id: str):
    return publish_release({"tasks": tasks}, data_root=root, run_id=run_id, parent=None, config={"run": run_id})


def raw_latest(root: str) -> bytes:
    r = open_root(root)
    return r.fs.cat_file(r.join("releases", LATEST_FILE))


def assert_intact(root: str, tasks: pa.Table, run_ids: list[str]) -> None:
    """Every run's release complete and intact, LATEST one whole release id: the newest."""
    listed = list_releases(root)
    assert sorted(m.release_id for m in listed) == sorted(release_id_for(r) for r in run_ids)
    for manifest in listed:
        assert verify_release(root, manifest.release_id) == [], manifest.release_id
        assert sorted_rows(read_table(root, manifest.release_id, "tasks")) == sorted_rows(tasks)
    assert raw_latest(root) == f"{listed[-1].release_id}\n".encode()  # the newest, written whole
    r = open_root(root)
    assert [p for p in r.fs.ls(r.releases, detail=False) if p.rsplit("/", 1)[-1].startswith(TMP_PREFIX)] == []


class Hold:
    """Holds the publisher thread named `thread` at `stage` (the publisher's fault hook) until `go` is set."""

    def __init__(self, thread: str, stage: str):
        self.thread, self.stage = thread, stage
        self.reached, self.go = threading.Event(), threading.Event()

    def __call__(self, stage: str) -> None:
        if stage == self.stage and threading.current_thread().name == self.thread:
            self.reached.set()
            assert self.go.wait(120), "never released"


def held_publisher(root: str, tasks: pa.Table, run_id: str, hold: Hold) -> tuple[threading.Thread, dict]:
    out: dict = {}

    def work() -> None:
        try:
            out["manifest"] = publish(root, tasks, run_id)
        except BaseException as exc:  # reported by the test
            out["error"] = exc

    thread = threading.Thread(target=work, name=hold.thread, daemon=True)
    thread.start()
    assert hold.reached.wait(120), out
    return thread, out


def test_a_publisher_finishing_after_a_newer_release_leaves_latest_to_it(root, tasks, monkeypatch):
    """A's release is complete (its manifest dated first) but A is held before it moves LATEST; B publishes whole;
    then A goes on: LATEST stays B, and both releases are there."""
    hold = Hold("publisher-a", "visible")
    monkeypatch.setattr(publisher, "_checkpoint", hold)
    thread, out = held_publisher(root, tasks, "run-a", hold)
    b = publish(root, tasks, "run-b")
    assert latest_release(root) == b.release_id
    hold.go.set()
    thread.join(120)
    assert "error" not in out and out["manifest"].release_id == release_id_for("run-a")
    assert out["manifest"].created_at < b.created_at
    assert latest_release(root) == b.release_id
    assert_intact(root, tasks, ["run-a", "run-b"])


def test_an_older_republish_does_not_take_latest_back(root, tasks):
    a = publish(root, tasks, "run-a")
    b = publish(root, tasks, "run-b")
    assert publish(root, tasks, "run-a") == a  # an Airflow retry of the older run, after the newer one published
    assert latest_release(root) == b.release_id


def test_a_damaged_latest_is_replaced_not_an_obstacle(root, tasks):
    publish(root, tasks, "run-a")
    r = open_root(root)
    r.fs.pipe_file(r.join("releases", LATEST_FILE), b"\xff not an id")
    b = publish(root, tasks, "run-b")
    assert latest_release(root) == b.release_id


def _record_latest_writes(root: str, monkeypatch) -> list[tuple[str, str, dict]]:
    """(thread, content, options) of every write to LATEST through the root's filesystem class (fsspec caches one
    instance per thread)."""
    cls = type(open_root(root).fs)
    writes: list[tuple[str, str, dict]] = []
    real = cls.pipe_file

    def pipe_file(self, path, value, **kwargs):
        if path.endswith(f"/{LATEST_FILE}"):
            writes.append((threading.current_thread().name, bytes(value).decode().strip(), kwargs))
        return real(self, path, value, **kwargs)

    monkeypatch.setattr(cls, "pipe_file", pipe_file)
    return writes


def test_object_store_race_between_read_and_write_is_repaired_before_the_publisher_returns(tasks, monkeypatch):
    """No compare-and-swap on an existing object: A reads an older LATEST, B publishes whole, A writes its (older)
    release over B's. A's verification lists the releases, finds B newer and writes B back before returning."""
    root = f"memory://coworkenv-{uuid.uuid4().hex}/data"
    base = publish(root, tasks, "base")
    writes = _record_latest_writes(root, monkeypatch)
    hold = Hold("publisher-a", "latest_checked")
    monkeypatch.setattr(publisher, "_checkpoint", hold)
    thread, out = held_publisher(root, tasks, "run-a", hold)  # A has read LATEST = base: older, so it will write
    b = publish(root, tasks, "run-b")
    assert latest_release(root) == b.release_id
    hold.go.set()
    thread.join(120)
    a = out["manifest"]
    assert a.created_at < b.created_at and base.created_at < a.created_at
    assert [(who, what) for who, what, _ in writes] == [
        ("MainThread", b.release_id),
        ("publisher-a", a.release_id),  # the moment LATEST went back …
        ("publisher-a", b.release_id),  # … repaired by A's own verification
    ]
    assert latest_release(root) == b.release_id
    assert_intact(root, tasks, ["base", "run-a", "run-b"])


def test_object_store_first_latest_is_a_create_only_write(tasks, monkeypatch):
    """Both publishers find no LATEST; B creates it first; A's create-only write fails, A reads B (newer) and stops:
    LATEST never names A, not even for a moment."""
    root = f"memory://coworkenv-{uuid.uuid4().hex}/data"
    writes = _record_latest_writes(root, monkeypatch)
    hold = Hold("publisher-a", "latest_checked")
    monkeypatch.setattr(publisher, "_checkpoint", hold)
    thread, out = held_publisher(root, tasks, "run-a", hold)
    b = publish(root, tasks, "run-b")
    hold.go.set()
    thread.join(120)
    assert "error" not in out
    assert writes == [
        ("MainThread", b.release_id, {"mode": "create"}),
        ("publisher-a", release_id_for("run-a"), {"mode": "create"}),
    ]
    assert latest_release(root) == b.release_id  # A's create was refused: FileExistsError, then a fresh compare
    assert_intact(root, tasks, ["run-a", "run-b"])


def test_concurrent_publishers_of_different_runs_in_threads(root, tasks):
    runs = [f"run-{i}" for i in range(6)]
    with ThreadPoolExecutor(len(runs)) as pool:
        manifests = list(pool.map(lambda run: publish(root, tasks, run), runs))
    assert [m.release_id for m in manifests] == [release_id_for(r) for r in runs]
    assert_intact(root, tasks, runs)


# --- real processes on a local disk ------------------------------------------------------------------------------


@pytest.fixture
def arrow_file(tmp_path, tasks) -> Path:
    path = tmp_path / "tasks.arrow"
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, tasks.schema) as writer:
        writer.write_table(tasks)
    return path


def _writer(root: str, arrow_file: Path, run_id: str, env: dict[str, str] | None = None) -> subprocess.Popen:
    environment = {k: v for k, v in os.environ.items() if k not in (FAULT_ENV, FAULT_MARKER_ENV)}
    environment |= {"PYTHONPATH": str(ROOT), "COWORKENV_CODE_VERSION": "test", **(env or {})}
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, root, str(arrow_file), run_id],
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _finish(proc: subprocess.Popen) -> str:
    out, err = proc.communicate(timeout=180)
    assert proc.returncode == 0, err
    return out.strip()


def test_concurrent_publisher_processes_on_a_local_disk(tmp_path, tasks, arrow_file):
    root = str(tmp_path / "data")
    runs = [f"run-{i}" for i in range(4)]
    procs = [_writer(root, arrow_file, run) for run in runs]
    assert [_finish(p) for p in procs] == [release_id_for(r) for r in runs]
    assert_intact(root, tasks, runs)


def test_a_process_held_after_its_release_is_complete_cannot_take_latest_back(tmp_path, tasks, arrow_file):
    """Process A stops (`visible:wait`) with its release complete and LATEST not yet moved; process B publishes a
    newer release; A goes on and returns, leaving LATEST to B."""
    root = str(tmp_path / "data")
    marker = tmp_path / "a.marker"
    a = _writer(root, arrow_file, "run-a", {FAULT_ENV: "visible:wait", FAULT_MARKER_ENV: str(marker)})
    deadline = time.monotonic() + 120
    while not marker.exists():
        assert a.poll() is None, a.communicate()
        assert time.monotonic() < deadline, "writer A never reached the stage"
        time.sleep(0.02)
    assert latest_release(root) is None and [m.release_id for m in list_releases(root)] == [release_id_for("run-a")]
    assert _finish(_writer(root, arrow_file, "run-b")) == release_id_for("run-b")
    assert latest_release(root) == release_id_for("run-b")
    marker.unlink()  # A goes on
    assert _finish(a) == release_id_for("run-a")
    assert latest_release(root) == release_id_for("run-b")
    assert_intact(root, tasks, ["run-a", "run-b"])


def test_every_table_survives_a_concurrent_publish(root, tables):
    """Full releases (every table) from two threads: nothing of one release leaks into the other."""
    runs = ["full-a", "full-b"]
    with ThreadPoolExecutor(2) as pool:
        list(pool.map(lambda run: publish_release(tables, data_root=root, run_id=run, parent=None, config={}), runs))
    for run in runs:
        for name in TABLES:
            assert read_table(root, release_id_for(run), name).num_rows == tables[name].num_rows, (run, name)
    assert latest_release(root) == list_releases(root)[-1].release_id


# --- object stores: the order of writes, and writers that die -------------------------------------------------------


def test_object_store_writes_the_manifest_after_every_table_and_latest_after_the_manifest(tables, monkeypatch):
    root = f"memory://coworkenv-{uuid.uuid4().hex}/data"
    cls = type(open_root(root).fs)
    order: list[str] = []
    real_pipe, real_open = cls.pipe_file, cls.open

    piping = threading.local()

    def pipe_file(self, path, value, **kwargs):  # whole objects: the manifest, LATEST
        order.append(path.rsplit("/releases/", 1)[-1])
        piping.on = True
        try:
            return real_pipe(self, path, value, **kwargs)
        finally:
            piping.on = False

    def open_file(self, path, mode="rb", **kwargs):  # streamed objects: the Parquet files
        if "w" in mode and not getattr(piping, "on", False):
            order.append(path.rsplit("/releases/", 1)[-1])
        return real_open(self, path, mode, **kwargs)

    monkeypatch.setattr(cls, "pipe_file", pipe_file)
    monkeypatch.setattr(cls, "open", open_file)
    manifest = publish_release(tables, data_root=root, run_id="ordered", parent=None, config={})
    parts = [f"{manifest.release_id}/{e.path}" for name in TABLES for e in manifest.files[name]]
    assert order == [*parts, f"{manifest.release_id}/manifest.json", LATEST_FILE]


@pytest.mark.parametrize(
    ("stage", "complete"), [("table:tasks", False), ("tables_written", False), ("latest_checked", True)]
)
def test_a_writer_process_dying_on_a_non_local_root_leaves_the_previous_latest(
    tmp_path, tasks, arrow_file, stage, complete
):
    """`dir::file://…` is not a LocalFileSystem, so the writer takes the object-store path (in place, manifest last)
    while another process can look: killed before its manifest, the release is not one; killed after it, the release
    is complete but LATEST has not moved; either way a retry of the run finishes it."""
    root = f"dir::file://{tmp_path / 'shared'}"
    assert not open_root(root).local
    base = publish(root, tasks, "base")
    proc = _writer(root, arrow_file, "dies", {FAULT_ENV: f"{stage}:exit"})
    proc.communicate(timeout=180)
    assert proc.returncode == 86
    assert latest_release(root) == base.release_id
    assert [m.release_id for m in list_releases(root)] == [
        base.release_id,
        *([release_id_for("dies")] if complete else []),
    ]
    assert _finish(_writer(root, arrow_file, "dies")) == release_id_for("dies")
    assert latest_release(root) == release_id_for("dies")
    assert verify_release(root) == []
