"""Releases for the SQL tests, published once per session into a temporary data root (`release_fixture.publish`).

- `r1` (older, 60 tasks): no rollouts, so `trajectories` and `sft` are empty (one empty Parquet file each, no
  partition folders), and no capability profile.
- `r2` (latest, parent r1, 200 tasks): published with `MAX_ROWS_PER_FILE` lowered to `PART_ROWS`, so the larger
  tables and the bigger families' trajectory partitions are split into several part files.
- Debris beside them, which the catalog must never read: `.tmp-publishing`, a copy of r1 as a writer killed before
  its rename leaves it, and `no-manifest`, a folder holding r2's `tasks` files but no `manifest.json`.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from coworkenv.data import publisher
from tests.sql.release_fixture import Releases, publish
from tests.support.releases import add_listed_part

PART_ROWS = 50


@pytest.fixture(scope="session")
def releases(tmp_path_factory) -> Releases:
    root = tmp_path_factory.mktemp("data")
    r1 = publish(root, "r1", n=60, seed=2, rollout=False, profile=False)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(publisher, "MAX_ROWS_PER_FILE", PART_ROWS)
        r2 = publish(root, "r2", n=200, seed=1, parent=r1.release_id)
    found = Releases(root, r1, r2)
    shutil.copytree(found.path(r1), root / "releases" / ".tmp-publishing")
    shutil.copytree(found.path(r2) / "tasks", root / "releases" / "no-manifest" / "tasks")
    return found


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
    root = tmp_path_factory.mktemp("duplicated-rl")
    release = releases.copy(releases.r2, root)
    for part in sorted((release / "rl").glob("*.parquet")):
        add_listed_part(release, "rl", f"copy-{part.name}", pq.read_table(part))
    return root
