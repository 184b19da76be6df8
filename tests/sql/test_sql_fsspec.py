"""The SQL catalog and `coworkenv sql` on non-local fsspec data roots: DuckDB reads the listed files through the
root's fsspec filesystem (registered with the connection), with the same answers, integrity checks and seal as on a
local disk.

- `memory://` (in this process): the session's releases copied there, debris included.
- `dir::file://…` (fsspec's chained directory filesystem over a local folder, so that another process sees it):
  a release published there by `publish_release` — which takes the object-store path, written in place with the
  manifest last, as on S3 — then queried by the `coworkenv` console script in its own process.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import fsspec
import pytest

from coworkenv.data import catalog
from coworkenv.data.root import DataRoot, open_root
from coworkenv.data.schemas import TABLES
from coworkenv.errors import CoworkEnvError
from tests.sql.release_fixture import publish
from tests.support import ROOT

CLI = Path(sys.executable).parent / "coworkenv"


@pytest.fixture(scope="module")
def memory_root(releases) -> str:
    url = f"memory://coworkenv-sql-{uuid.uuid4().hex}/data"
    fs, path = fsspec.core.url_to_fs(url)
    fs.put(str(releases.root / "releases"), f"{path}/releases", recursive=True)
    return url


def _relations() -> list[str]:
    return [f"src_{t}" for t in TABLES] + ["src_releases"] + [name for name, _ in catalog.view_files()]


def _same(a: Any, b: Any) -> bool:
    """Equal values, floats to 1e-12 relative (DuckDB sums in whatever order its hash tables give)."""
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-15) or (math.isnan(a) and math.isnan(b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


@pytest.mark.parametrize("release", ["latest", "all"])
def test_every_relation_reads_the_same_as_on_a_local_disk(releases, memory_root, release):
    local, remote = catalog.connect(releases.root, release), catalog.connect(memory_root, release)
    try:
        for name in _relations():
            sql = f"select * from {name} order by all"
            expected, got = local.sql(sql).to_arrow_table(), remote.sql(sql).to_arrow_table()
            assert got.schema.equals(expected.schema) and got.num_rows == expected.num_rows, name
            assert _same(got.to_pylist(), expected.to_pylist()), name
    finally:
        local.close()
        remote.close()


def test_files_are_read_through_fsspec_urls(memory_root, releases):
    (selected,) = catalog.resolve_releases(memory_root, "latest")
    assert selected.release_id == releases.r2.release_id
    assert all(f.startswith("memory://") for files in selected.files.values() for f in files)
    con = catalog.connect(memory_root)
    try:
        assert "memory" in con.list_filesystems()
    finally:
        con.close()


def test_the_connection_stays_sealed_on_fsspec_roots(memory_root, releases):
    """Only the listed parts are readable: not the debris beside them, nor a write to the store."""
    debris = f"{memory_root}/releases/.tmp-publishing/tasks"
    fs, path = fsspec.core.url_to_fs(debris)
    part = fs.unstrip_protocol(sorted(fs.find(path))[0])
    con = catalog.connect(memory_root)
    try:
        for statement in (f"select count(*) from read_parquet('{part}')", "select * from read_csv('/etc/hostname')"):
            with pytest.raises(CoworkEnvError, match="file system operations are disabled|Permission"):
                catalog.run_query(con, statement)
        with pytest.raises(CoworkEnvError, match="COPY statements that write files are refused"):
            catalog.run_query(con, f"copy (select 1) to '{memory_root}/releases/x.parquet'")
    finally:
        con.close()


def test_a_damaged_release_on_an_object_store_is_refused(releases):
    url = f"memory://coworkenv-sql-{uuid.uuid4().hex}/data"
    fs, path = fsspec.core.url_to_fs(url)
    release = f"{path}/releases/{releases.r2.release_id}"
    fs.put(str(releases.path(releases.r2)), release, recursive=True)
    fs.pipe_file(f"{path}/releases/LATEST", f"{releases.r2.release_id}\n".encode())
    assert catalog.query("select count(*) as n from src_tasks", url).to_pylist() == [{"n": releases.r2.rows["tasks"]}]
    victim = sorted(fs.find(f"{release}/trajectories"))[0]
    fs.rm(victim)
    with pytest.raises(
        CoworkEnvError, match=rf"damaged release {releases.r2.release_id}: memory://.*/trajectories/.*: missing"
    ):
        catalog.connect(url)


def test_a_root_whose_filesystem_is_not_installed_is_named():
    try:
        import s3fs  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("s3fs is installed: s3:// would be reached over the network")
    with pytest.raises(CoworkEnvError, match=r"data root 's3://bucket/data': Install s3fs"):
        catalog.connect("s3://bucket/data")


# --- the console script, in its own process ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def dir_root(tmp_path_factory):
    """A release published through the non-local path (`dir::` is not a LocalFileSystem: no rename, manifest last)."""
    folder = tmp_path_factory.mktemp("shared")
    url = f"dir::file://{folder}"
    assert not open_root(url).local
    truth = publish(url, "r1", n=60, seed=2, rollout=False, profile=False)
    return url, truth


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k != "COWORKENV_DATA_ROOT"}
    environment |= {"HF_HUB_OFFLINE": "1", "COLUMNS": "200", **(env or {})}
    return subprocess.run(
        [str(CLI), *args], capture_output=True, text=True, env=environment, cwd=ROOT, timeout=180, check=False
    )


def test_coworkenv_sql_queries_a_release_published_by_another_process(dir_root):
    url, truth = dir_root
    query = "select family, n_tasks from valid_share_by_family order by family"
    by_option = _cli("sql", query, "--format", "json", "--data-root", url, "--verify")
    by_env = _cli(
        "sql", "select release_id, is_latest from src_releases", "--format", "csv", env={"COWORKENV_DATA_ROOT": url}
    )
    assert by_option.returncode == 0, by_option.stderr
    got = {row["family"]: row["n_tasks"] for row in json.loads(by_option.stdout)}
    assert got == {family: validated for family, (validated, _valid) in truth.valid_by_family.items()}
    assert by_env.returncode == 0, by_env.stderr
    assert by_env.stdout.splitlines() == ["release_id,is_latest", f"{truth.release_id},true"]


def test_coworkenv_sql_column_tests_pass_on_a_fsspec_root(dir_root):
    url, _ = dir_root
    done = _cli("sql", "--test", "--data-root", url)
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert "column tests passed" in done.stdout


def test_releases_and_export_read_the_same_fsspec_root(dir_root, tmp_path):
    url, truth = dir_root
    listed = _cli("releases", "--data-root", url)
    assert listed.returncode == 0, listed.stderr
    assert truth.release_id in listed.stdout
    exported = _cli(
        "export",
        "--release",
        "latest",
        "--format",
        "jsonl",
        "--table",
        "tasks",
        "--out",
        str(tmp_path / "out"),
        "--data-root",
        url,
    )
    assert exported.returncode == 0, exported.stderr
    lines = (tmp_path / "out" / "tasks.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == truth.rows["tasks"]


def test_a_filesystem_duckdb_cannot_take_is_a_one_line_error(memory_root):
    """DuckDB routes paths by the filesystem's protocol: one without a concrete protocol is refused, named."""
    root = open_root(memory_root)
    nameless = DataRoot(fs=fsspec.filesystem("memory", skip_instance_cache=True), path=root.path, url=root.url)
    nameless.fs.protocol = "abstract"
    with pytest.raises(CoworkEnvError, match=rf"data root {memory_root}: .*concrete fsspec implementation") as info:
        catalog.connect(nameless)
    assert "\n" not in str(info.value)
