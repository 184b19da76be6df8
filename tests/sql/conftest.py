"""Fixture releases for the SQL tests, built once per session in the DESIGN §7 layout.

- `r1` (older, 60 tasks): partition column dropped from the files (as pyarrow's write_dataset writes them),
  `trajectories` and `capability_profile` empty (one empty Parquet file each, no partition folders).
- `r2` (latest, parent r1, 200 tasks): partition column kept in the files, trajectories split into several parts.
- `.tmp-publishing` (a half-written release with a manifest) and `no-manifest` (a folder without one): never read.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.sql.release_fixture import Truth, build_release


class Releases:
    def __init__(self, root: Path, r1: Truth, r2: Truth):
        self.root = root
        self.r1 = r1
        self.r2 = r2


@pytest.fixture(scope="session")
def releases(tmp_path_factory) -> Releases:
    root = tmp_path_factory.mktemp("data")
    r1 = build_release(root, "r1", n=60, seed=2, created_at="2026-11-01T00:00:00Z", empty_tables=("trajectories", "capability_profile"),
                       drop_partition_column=True, latest=False)  # fmt: skip
    r2 = build_release(root, "r2", n=200, seed=1, parent="r1", created_at="2026-12-01T00:00:00Z")
    build_release(root, "tmpjunk", n=20, seed=3, created_at="2026-12-24T00:00:00Z", latest=False, directory_name=".tmp-publishing")
    (root / "releases" / "no-manifest" / "tasks").mkdir(parents=True)
    return Releases(root, r1, r2)


@pytest.fixture(scope="session")
def latest_con(releases):
    from coworkenv.data.catalog import connect

    con = connect(releases.root, "latest")
    yield con
    con.close()


@pytest.fixture(scope="session")
def all_con(releases):
    from coworkenv.data.catalog import connect

    con = connect(releases.root, "all")
    yield con
    con.close()


@pytest.fixture(scope="session")
def duplicated_rl_root(releases, tmp_path_factory) -> Path:
    """A data root whose only release is r2 with every RL prompt written twice: the column tests must catch it."""
    import shutil

    root = tmp_path_factory.mktemp("duplicated-rl")
    shutil.copytree(releases.root / "releases" / "r2", root / "releases" / "r2")
    (root / "releases" / "LATEST").write_text("r2\n")
    rl = root / "releases" / "r2" / "rl"
    shutil.copy(rl / "part-0.parquet", rl / "part-1.parquet")
    return root
