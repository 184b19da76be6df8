"""Every example query in sql/queries/ runs on a real release, alone and over all releases, and says something."""

from __future__ import annotations

import pytest

from coworkenv.data import catalog
from tests.sql.release_fixture import rows

QUERIES = sorted((catalog.SQL_DIR / "queries").glob("*.sql"))


def test_there_are_example_queries():
    names = {p.stem for p in QUERIES}
    assert {
        "top_rejection_reasons",
        "lowest_valid_share_families",
        "sft_tokens_per_family",
        "compare_releases",
    } <= names


@pytest.mark.parametrize("path", QUERIES, ids=lambda p: p.stem)
def test_example_query_runs(releases, latest_con, all_con, path):
    sql = path.read_text(encoding="utf-8")
    assert sql.startswith("-- ") and "coworkenv sql --file sql/queries/" in sql
    latest = catalog.run_query(latest_con, sql)
    everything = catalog.run_query(all_con, sql)
    assert latest.num_rows > 0, "the example says something on the fixture release"
    assert everything.num_rows >= latest.num_rows or path.stem == "compare_releases"
    if "release_id" in latest.column_names:
        assert set(latest.column("release_id").to_pylist()) == {releases.r2.release_id}


def test_compare_releases_pairs_latest_with_its_predecessor(releases, all_con, latest_con):
    sql = (catalog.SQL_DIR / "queries" / "compare_releases.sql").read_text(encoding="utf-8")
    got = rows(all_con, sql)
    assert {r["release_id"] for r in got} == {releases.r2.release_id}
    both = [r for r in got if r["previous_release"] is not None]
    assert both and all(r["previous_release"] == releases.r1.release_id for r in both)
    for r in both:
        assert r["valid_share_change"] == pytest.approx(r["valid_share"] - r["previous_valid_share"], abs=2e-3)
    alone = rows(latest_con, sql)
    assert alone and all(r["previous_release"] is None for r in alone)


def test_top_rejection_reasons_are_ordered_and_shares_bounded(latest_con):
    got = rows(latest_con, (catalog.SQL_DIR / "queries" / "top_rejection_reasons.sql").read_text(encoding="utf-8"))
    counts = [r["rejected_tasks"] for r in got]
    assert counts == sorted(counts, reverse=True)
    assert all(0 < r["share_of_rejected"] <= 1 for r in got)


def test_policy_pass_rates_rank_oracle_first(latest_con):
    got = rows(latest_con, (catalog.SQL_DIR / "queries" / "policy_pass_rates.sql").read_text(encoding="utf-8"))
    assert [r["agent"] for r in got][0] == "oracle" and got[-1]["agent"] == "null"
