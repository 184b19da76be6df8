"""Datasets: Parquet schemas, atomic versioned releases, the DuckDB catalog, exports; `engine()`, a SQLAlchemy engine
over the releases (`pandas.read_sql("select * from valid_share_by_family", coworkenv.data.engine())`)."""

from coworkenv.data.sql_engine import engine

__all__ = ["engine"]
