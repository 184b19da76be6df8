"""A SQLAlchemy engine over published releases (docs/datasets.md, "SQL from Python"): the same `src_*`, staging,
intermediate and mart views as `coworkenv sql`, for pandas, notebooks and any tool that speaks SQLAlchemy.

    import pandas, coworkenv.data
    pandas.read_sql("select * from valid_share_by_family", coworkenv.data.engine())

Each pooled connection is one `catalog.connect` (duckdb-engine's dialect over it): the releases are checked against
their manifests when it opens, it reads only their listed files, and it keeps the catalog's limits (memory, threads,
no writes, no other files; `QueryLimits`). A statement's own timeout and row caps are `coworkenv sql`'s (`query`),
not the engine's: a client that pages through a result decides how much it reads."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from coworkenv.data.root import DataRoot
    from coworkenv.data.sql_limits import QueryLimits


def engine(
    release: str = "latest",
    data_root: str | os.PathLike[str] | DataRoot | None = None,
    *,
    sql_dir: Path | None = None,
    limits: QueryLimits | None = None,
    verify: bool = False,
    pool_size: int = 1,
) -> Any:
    """A SQLAlchemy `Engine` over `release` (`latest`, `all` or a release id) of `data_root` (default: the configured
    data root). Bad input — an unknown release, a damaged one — is a `CoworkEnvError` when the first connection
    opens. `verify`: hash every file afresh then. `pool_size`: connections kept open (each holds its own catalog)."""
    from duckdb_engine import ConnectionWrapper
    from sqlalchemy import create_engine, event
    from sqlalchemy.pool import QueuePool

    from coworkenv.data.catalog import connect
    from coworkenv.data.sql_limits import refuse_file_writes

    def make() -> Any:
        return ConnectionWrapper(connect(data_root, release, sql_dir=sql_dir, limits=limits, verify=verify))

    made = create_engine("duckdb://", creator=make, poolclass=QueuePool, pool_size=pool_size, max_overflow=0)
    event.listen(made, "before_cursor_execute", lambda conn, cursor, statement, *rest: refuse_file_writes(statement))
    return made


@contextmanager
def catalog_connection(made: Any) -> Iterator[Any]:
    """One of the engine's connections as the DuckDB connection it wraps, taken out of the pool and closed after (a
    statement stopped at its timeout may leave it busy: `catalog.close`)."""
    from coworkenv.data.catalog import close

    raw = made.raw_connection()
    con = raw.driver_connection
    raw.detach()
    try:
        yield con
    finally:
        close(con)
