"""The catalog over releases written by the real publisher (`coworkenv.data.publisher.publish_release`)."""

from __future__ import annotations

import pytest

from coworkenv.data import catalog
from tests.sql.release_fixture import build_release, rows

release = pytest.importorskip("coworkenv.data.reader")


@pytest.fixture(scope="module")
def published(tmp_path_factory):
    root = tmp_path_factory.mktemp("published")
    first = build_release(root, "run-1", n=60, seed=2, empty_tables=("repairs", "trajectories"), publish=True)
    second = build_release(root, "run-2", n=120, seed=1, parent=first.release_id, publish=True)
    return root, first, second


def test_latest_and_all_follow_the_publisher(published):
    root, first, second = published
    assert catalog.latest_release_id(root) == release.latest_release(root) == second.release_id
    assert [r.release_id for r in catalog.list_releases(root)] == [first.release_id, second.release_id]


def test_views_reproduce_the_published_rows(published):
    root, first, second = published
    con = catalog.connect(root, "all")
    overview = {r["release_id"]: r for r in rows(con, "select * from release_overview")}
    for truth in (first, second):
        got = overview[truth.release_id]
        assert got["n_trajectories"] == truth.rows["trajectories"]
        assert got["n_sft_examples"] == truth.rows["sft"] and got["sft_tokens"] == truth.sft_tokens
        assert (got["n_tasks"], got["n_valid"]) == (truth.validated, truth.valid)
    assert overview[second.release_id]["parent"] == first.release_id and overview[second.release_id]["is_latest"]
    shares = rows(con, f"select family, n_tasks, n_valid from valid_share_by_family where release_id = '{second.release_id}'")
    assert {r["family"]: (r["n_tasks"], r["n_valid"]) for r in shares} == second.valid_by_family
    families = {r["family"] for r in rows(con, f"select distinct family from stg_trajectories where release_id = '{second.release_id}'")}
    assert families == second.families


def test_every_view_runs_over_published_releases(published):
    root, _, _ = published
    con = catalog.connect(root, "all")
    for view, _ in catalog.view_files():
        result = catalog.run_query(con, f"select * from {view}")
        assert "release_id" in result.column_names and result.num_rows > 0, view
