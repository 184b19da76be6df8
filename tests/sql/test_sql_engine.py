"""`coworkenv.data.engine()`: a SQLAlchemy engine over releases (duckdb-engine over the catalog) — the same views and
rows as `coworkenv sql`, pandas and SQLAlchemy's own API on it, its limits, and bad input as one-line errors."""

from __future__ import annotations

import pandas
import pytest
from sqlalchemy import inspect, text

import coworkenv.data
from coworkenv.data import catalog
from coworkenv.data.sql_limits import QueryLimits
from coworkenv.errors import CoworkEnvError

QUERY = "select family, n_tasks, valid_share from valid_share_by_family order by family"


@pytest.fixture(scope="module")
def engine(releases):
    made = coworkenv.data.engine(data_root=releases.root)
    yield made
    made.dispose()


def test_pandas_reads_the_mart_views_as_coworkenv_sql_does(engine, releases):
    frame = pandas.read_sql(QUERY, engine)
    assert frame.to_dict("records") == catalog.query(QUERY, releases.root).to_pylist()
    assert len(frame) > 3 and set(frame.columns) == {"family", "n_tasks", "valid_share"}


def test_sqlalchemy_parameters_and_inspection(engine, releases):
    with engine.connect() as con:
        n = con.execute(text("select count(*) from stg_tasks where difficulty >= :d"), {"d": 2}).scalar()
        releases_seen = con.execute(text("select release_id from src_releases where is_latest")).scalars().all()
    assert 0 < n < releases.r2.rows["tasks"]
    assert releases_seen == [releases.r2.release_id]  # `latest` by default
    seen = inspect(engine)
    assert {"src_tasks", "stg_tasks", "valid_share_by_family"} <= set(seen.get_view_names()) | set(
        seen.get_table_names()
    )


def test_another_release_or_all_of_them(releases):
    for release, expected in (
        ("all", {releases.r1.release_id, releases.r2.release_id}),
        (releases.r1.release_id, {releases.r1.release_id}),
    ):
        made = coworkenv.data.engine(release, data_root=releases.root)
        try:
            found = set(pandas.read_sql("select distinct release_id from src_tasks", made)["release_id"])
        finally:
            made.dispose()
        assert found == expected


def test_it_is_read_only_and_keeps_the_limits(engine, releases, tmp_path):
    with engine.connect() as con, pytest.raises(CoworkEnvError, match="COPY statements that write files are refused"):
        con.execute(text(f"copy (select 1) to '{tmp_path / 'out.csv'}'"))
    assert not (tmp_path / "out.csv").exists()
    with engine.connect() as con, pytest.raises(Exception, match="(?i)permission|not allowed|disabled"):
        con.execute(text(f"select * from read_csv('{releases.root}/../elsewhere.csv')"))
    tight = coworkenv.data.engine(data_root=releases.root, limits=QueryLimits(memory_limit="64MB", threads=1))
    try:
        with tight.connect() as con:
            assert con.execute(text("select current_setting('threads')")).scalar() == 1
    finally:
        tight.dispose()


def test_an_unknown_release_is_one_clear_error(releases):
    made = coworkenv.data.engine("no-such-release", data_root=releases.root)
    with pytest.raises(CoworkEnvError, match="unknown release 'no-such-release'"):
        pandas.read_sql("select 1", made)
