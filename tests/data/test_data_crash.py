"""Crash safety: a publisher killed (SIGKILL, or `os._exit`) at any stage leaves the previous `LATEST`, no partial
release under a final name, and a retry of the same run succeeds with the same release.

Each case runs the real writer in its own process on its own copy of a data root that already holds a release,
stops it at a stage with `COWORKENV_RELEASE_FAULT=<stage>:pause` (the writer announces the stage in a marker file
and sleeps), then kills it with SIGKILL. The cases run side by side.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pytest

from coworkenv.data.layout import TMP_PREFIX, release_id_for
from coworkenv.data.publisher import FAULT_ENV, FAULT_MARKER_ENV, publish_release
from coworkenv.data.reader import latest_release, list_releases, read_table, verify_release
from coworkenv.data.schemas import TABLES
from tests.support.releases import sorted_rows

WRITER = """
import sys
import pyarrow as pa
from coworkenv.data.publisher import publish_release
from coworkenv.data.schemas import TABLES

root, arrow_dir, run_id, parent = sys.argv[1:5]
tables = {name: pa.ipc.open_file(pa.memory_map(f"{arrow_dir}/{name}.arrow")).read_all() for name in TABLES}
publish_release(tables, data_root=root, run_id=run_id, parent=parent, config={"case": run_id})
print("published")
"""

# (stage, how) → whether the new release is complete (under its final name) when the writer dies.
CASES = [
    ("tmp_created", "pause", False),
    ("table:tasks", "pause", False),  # after the first table
    ("table:sft", "pause", False),  # half-way
    ("table:rl", "exit", False),  # os._exit instead of a kill
    ("tables_written", "pause", False),  # before the manifest
    ("manifest_written", "pause", False),  # before the rename
    ("visible", "pause", True),  # after the rename, before LATEST
    ("latest_temp_written", "pause", True),  # LATEST's temporary written, not yet renamed over LATEST
]
RUN = "crash-run"


@pytest.fixture(scope="module")
def arrow_dir(tmp_path_factory, tables) -> Path:
    path = tmp_path_factory.mktemp("arrow")
    for name, table in tables.items():
        with pa.OSFile(str(path / f"{name}.arrow"), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
            writer.write_table(table)
    return path


def _complete_dirs(root: Path) -> list[str]:
    return sorted(p.name for p in (root / "releases").iterdir() if p.is_dir() and not p.name.startswith("."))


def test_killed_writer_leaves_previous_latest(tmp_path, tables, arrow_dir):
    base = tmp_path / "base"
    previous = publish_release(
        {"tasks": tables["tasks"]}, data_root=str(base), run_id="previous", parent=None, config={}
    )
    target = release_id_for(RUN)

    procs = {}
    for stage, how, _ in CASES:
        root = tmp_path / stage.replace(":", "_")
        shutil.copytree(base, root)
        marker = tmp_path / f"{stage.replace(':', '_')}.marker"
        env = {
            **os.environ,
            FAULT_ENV: f"{stage}:{how}",
            FAULT_MARKER_ENV: str(marker),
            "COWORKENV_CODE_VERSION": "test",
        }
        proc = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(root), str(arrow_dir), RUN, previous.release_id],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        procs[stage] = (proc, root, marker, how)

    deadline = time.monotonic() + 120
    for stage, (proc, _root, marker, how) in procs.items():
        if how == "pause":
            while not marker.exists():
                assert proc.poll() is None, f"{stage}: writer exited early: {proc.communicate()}"
                assert time.monotonic() < deadline, f"{stage}: writer never reached the stage"
                time.sleep(0.02)
            assert marker.read_text() == stage
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
        out, err = proc.communicate()
        assert proc.returncode == (-signal.SIGKILL if how == "pause" else 86), (stage, err)
        assert "published" not in out

    for stage, _how, complete in CASES:
        _proc, root, _marker, _ = procs[stage]
        # the previous LATEST survives; nothing partial under a final name
        assert latest_release(root) == previous.release_id, stage
        if complete:
            assert _complete_dirs(root) == sorted([previous.release_id, target]), stage
            assert verify_release(root, target) == [], stage
        else:
            assert _complete_dirs(root) == [previous.release_id], stage
        assert [m.release_id for m in list_releases(root)] == [previous.release_id, *([target] if complete else [])], (
            stage
        )
        assert sorted_rows(read_table(root, "latest", "tasks")) == sorted_rows(tables["tasks"])
        # a retry of the same run succeeds with the same release
        manifest = publish_release(
            tables, data_root=str(root), run_id=RUN, parent=previous.release_id, config={"case": RUN}
        )
        assert manifest.release_id == target and latest_release(root) == target, stage
        assert verify_release(root) == [], stage
        for name in TABLES:
            assert read_table(root, "latest", name).num_rows == tables[name].num_rows, (stage, name)
        assert _complete_dirs(root) == sorted([previous.release_id, target]), stage
        # the killed writer's temporaries are gone: the retry found their locks free
        assert [p.name for p in (root / "releases").iterdir() if p.name.startswith(TMP_PREFIX)] == [], stage


def test_control_writer_without_fault_publishes(tmp_path, arrow_dir):
    root = tmp_path / "root"
    env = {k: v for k, v in os.environ.items() if k != FAULT_ENV}
    done = subprocess.run(
        [sys.executable, "-c", WRITER, str(root), str(arrow_dir), RUN, ""],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert latest_release(root) == release_id_for(RUN)
    assert verify_release(root) == []


def _paused_writer(root: Path, arrow_dir: Path, run_id: str, stage: str, marker: Path) -> subprocess.Popen:
    env = {**os.environ, FAULT_ENV: f"{stage}:pause", FAULT_MARKER_ENV: str(marker), "COWORKENV_CODE_VERSION": "test"}
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(root), str(arrow_dir), run_id, ""],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while not marker.exists():
        assert proc.poll() is None, f"writer exited early: {proc.communicate()}"
        assert time.monotonic() < deadline, "writer never reached the stage"
        time.sleep(0.02)
    return proc


def test_a_live_writers_temporary_survives_another_publisher_and_goes_once_it_is_killed(tmp_path, tables, arrow_dir):
    root = tmp_path / "root"
    releases = root / "releases"
    writers = [
        _paused_writer(root, arrow_dir, "slow-run", "tables_written", tmp_path / "dir.marker"),
        _paused_writer(root, arrow_dir, "slow-latest", "latest_temp_written", tmp_path / "latest.marker"),
    ]
    try:
        live = sorted(p.name for p in releases.iterdir() if p.name.startswith(TMP_PREFIX))
        assert len(live) == 2 and any(name.startswith(f"{TMP_PREFIX}LATEST-") for name in live)
        publish_release({"tasks": tables["tasks"]}, data_root=str(root), run_id="other", parent=None, config={})
        assert sorted(p.name for p in releases.iterdir() if p.name.startswith(TMP_PREFIX)) == live  # both still held
    finally:
        for proc in writers:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=60)
            proc.communicate()
    publish_release({"tasks": tables["tasks"]}, data_root=str(root), run_id="third", parent=None, config={})
    assert [p.name for p in releases.iterdir() if p.name.startswith(TMP_PREFIX)] == []
    assert latest_release(root) == release_id_for("third") and verify_release(root) == []
