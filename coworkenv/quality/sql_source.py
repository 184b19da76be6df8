"""Great Expectations over SQL on the releases' own engine (`coworkenv.data.engine`): a GX data source whose tables
are the catalog's views (`src_*`, staging, marts), so expectations are pushed down into DuckDB and nothing is
loaded whole into pandas. `UnexpectedRowsExpectation` says the cross-table and derived rules in SQL.

GX 1.x's own SQL data source cannot run on duckdb-engine: it executes each metric query in a `with
engine.connect()` block and fetches the rows after the block has closed the connection, which DuckDB's cursor does
not survive ("list index out of range" in `resolve_metric_bundle`). GX keeps one connection open instead for the
dialects it knows need it (SQLite, SQL Server); `ReleaseExecutionEngine` does the same for this one, and
`ReleaseDatasource` hands GX the project's engine (limits, read-only, only the listed files) rather than one GX
makes from a URL. Registering the class is enough for GX: `context.data_sources.add_coworkenv_release(...)`.

Imported only where a gate runs: GX itself is heavy (seconds at its first import)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, ClassVar, Literal

from great_expectations.datasource.fluent import SQLDatasource
from great_expectations.execution_engine import SqlAlchemyExecutionEngine

SOURCE_TYPE = "coworkenv_release"


class ReleaseExecutionEngine(SqlAlchemyExecutionEngine):
    """GX's SQL execution engine on one connection kept open for its whole life (closed with the engine)."""

    @contextmanager
    def get_connection(self) -> Iterator[Any]:
        if self._connection is None:
            self._connection = self.engine.connect()
        yield self._connection


class ReleaseDatasource(SQLDatasource):
    """A GX data source over a release's catalog: its table assets name the catalog's views."""

    type: Literal["coworkenv_release"] = SOURCE_TYPE  # type: ignore[assignment]
    execution_engine_override: ClassVar[type[SqlAlchemyExecutionEngine]] = ReleaseExecutionEngine
    connection_string: str = "duckdb://"
    release: str = "latest"
    data_root: str | None = None

    def get_engine(self) -> Any:
        if self._engine is None:
            from coworkenv.data.sql_engine import engine

            # Two connections: the one GX keeps open, and the one a table asset's check opens beside it.
            self._engine = engine(self.release, self.data_root, pool_size=2)
        return self._engine

    def get_execution_engine(self) -> SqlAlchemyExecutionEngine:
        if self._execution_engine is None:
            self._execution_engine = ReleaseExecutionEngine(engine=self.get_engine(), create_temp_table=False)
        return self._execution_engine

    def close(self) -> None:
        """The kept connection and the engine's pool (each pooled connection holds a catalog in memory)."""
        if self._execution_engine is not None:
            self._execution_engine.close()
        if self._engine is not None:
            self._engine.dispose()
