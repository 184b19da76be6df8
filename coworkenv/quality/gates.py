"""`run_gate(stage, tables)`: check a stage's tables against its Great Expectations suites.

Each call builds a fresh ephemeral GX context (in-memory stores, analytics and progress bars off; ~20 ms), adds a
pandas data source with one dataframe asset per table, runs one validation definition per table and, when a
`report_dir` is given, writes the stage's report into `report_dir/data_docs/<stage>/`: `index.html`, one
self-contained page with every expectation's result (`coworkenv.quality.report`; it renders offline), and GX's own
Data Docs under `gx/` (a local filesystem site, rewritten to render offline too). One site per stage: GX's site
builder drops pages whose results are not in the context's stores, so stages sharing a site would erase each other's
pages, and a rerun replaces its stage's report. A fresh context per call keeps runs independent: nothing from an
earlier run leaks into the report.

GX is quiet while a gate runs (`quiet_gx`): its INFO logs (some 200 lines at its first import), its deprecation
warnings and its progress bars would bury the verdict in a task's log.

`run_gate_files(stage, files)` is the same gate over Parquet files (a run's staged tables), judged a part at a time
(docs/design/pipeline.md, "Bounded memory"): each part is read a batch at a time into frames that keep the derived helper
columns and stand-ins for the bulky columns, and the parts' results are added up (`coworkenv.quality.merge`): the
verdict, the counts and the examples are those `run_gate` gives over the whole tables.

A failing gate raises `GateFailed` after the report is written: its message lists every failed expectation with
its counts and up to five examples, and `GateFailed.result` holds the whole `GateResult`. The gate never
publishes anything; callers publish only after `run_gate` returns.
"""

from __future__ import annotations

import logging
import shutil
import time
import warnings
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from coworkenv.errors import CoworkEnvError
from coworkenv.quality.derive import to_frame
from coworkenv.quality.merge import merged_suite_result, summable
from coworkenv.quality.outcomes import (
    MAX_EXAMPLES,
    ExpectationOutcome,
    FailedExpectation,
    expectation_columns,
    failure_of,
    outcome_of,
)
from coworkenv.quality.report import GX_FOLDER, gx_pages, make_offline, write_page
from coworkenv.quality.stored import CHUNK_ROWS, light_parts, stored_duplicates, stored_rows
from coworkenv.quality.suites import GATES, StageGate

__all__ = [
    "MAX_EXAMPLES",
    "ExpectationOutcome",
    "FailedExpectation",
    "GateFailed",
    "GateResult",
    "run_gate",
    "run_gate_files",
]

log = logging.getLogger(__name__)

DOCS_FOLDER = "data_docs"
SITE_NAME = "coworkenv_gates"
SOURCE = "coworkenv"
"""The pandas data source of the gates' tables (GX names each validation page `<source>-<table>.html`)."""
DOCS_EXAMPLES = 20
"""Unexpected values GX keeps per expectation (shown in Data Docs); failures quote the first MAX_EXAMPLES."""


class GateResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    stage: str
    success: bool
    statistics: dict[str, Any]
    """evaluated/successful/unsuccessful expectation counts, success_percent, per-table rows, seconds."""
    failures: list[FailedExpectation] = []
    expectations: list[ExpectationOutcome] = []
    """Every expectation evaluated, held or not, table by table in suite order."""
    report_path: str | None = None
    """The report page (`<report_dir>/data_docs/<stage>/index.html`, absolute) when a report_dir was given."""

    def summary(self) -> str:
        stats = self.statistics
        head = (
            f"gate {self.stage!r} {'passed' if self.success else 'failed'}: "
            f"{stats.get('unsuccessful_expectations', 0)} of {stats.get('evaluated_expectations', 0)} expectations failed"
        )
        lines = [head]
        for failure in self.failures:
            lines.append(f"  - {failure.message}")
        if not self.success:
            lines.append("  nothing from this stage may be published")
        if self.report_path:
            lines.append(f"  Data Docs: {self.report_path}")
        elif stats.get("report_error"):
            lines.append(f"  Data Docs could not be written: {stats['report_error']}")
        return "\n".join(lines)


class GateFailed(CoworkEnvError):
    """A stage's data broke its suite; `result` has the failed expectations and the report path."""

    exit_code = 1
    """A command that stops on it exits 1 with the whole summary: the data broke a rule, the input was not bad."""

    def __init__(self, result: GateResult):
        self.result = result
        super().__init__(result.summary())

    def __str__(self) -> str:
        return self.result.summary()

    def __reduce__(self) -> tuple[Any, ...]:  # picklable (process pools, Airflow/Celery workers)
        return (type(self), (self.result,))


def stages() -> list[str]:
    return GATES.names()


def run_gate(stage: str, tables: dict[str, Any], *, report_dir: str | Path | None = None) -> GateResult:
    """Validate `tables` (pandas DataFrames or pyarrow Tables by table name) against the stage's suites.

    Raises `UnknownName` for an unknown stage, `CoworkEnvError` when a table the stage needs is missing, and
    `GateFailed` (after writing Data Docs into `report_dir`, when given) when an expectation fails.
    """
    gate = GATES.get(stage)
    _require(gate, tables)
    started = time.perf_counter()
    with quiet_gx():
        frames = gate.derive({name: to_frame(tables[name], name) for name in gate.tables})
        return _judge(gate, {name: [frame] for name, frame in frames.items()}, report_dir, started)


def run_gate_files(
    stage: str,
    files: Mapping[str, str | Path],
    *,
    report_dir: str | Path | None = None,
    batch_size: int = 1000,
    chunk_rows: int = CHUNK_ROWS,
) -> GateResult:
    """`run_gate` over tables stored as Parquet files (a run's staged tables), in bounded memory: each table is read
    `batch_size` rows at a time and judged `chunk_rows` rows at a time (`coworkenv.quality.merge` adds the parts'
    results up). Each batch gets its helper columns (the cross-table ones from id sets read first, uniqueness from
    the duplicated keys DuckDB finds), then its bulky columns become stand-ins (`StageGate.bulky`); the same
    expectations see the same values and give the same result as over the whole tables."""
    gate = GATES.get(stage)
    _require(gate, files)
    started = time.perf_counter()
    paths = {name: Path(files[name]) for name in gate.tables}
    with quiet_gx():
        parsed = _parsed_columns(gate)
        sources = gate.link_sources(partial(stored_rows, paths))
        duplicates = {name: stored_duplicates(path, name) for name, path in paths.items()}
        chunks = {
            name: light_parts(
                gate, name, path, parsed.get(name, set()), batch_size, max(1, chunk_rows), sources, duplicates[name]
            )
            for name, path in paths.items()
        }
        return _judge(gate, chunks, report_dir, started)


def _require(gate: StageGate, tables: Mapping[str, Any]) -> None:
    missing = [name for name in gate.tables if name not in tables]
    if missing:
        raise CoworkEnvError(
            f"gate {gate.stage!r} needs tables {', '.join(gate.tables)}; missing: {', '.join(missing)}"
        )


STAND_IN_SAFE = frozenset({"expect_column_values_to_not_be_null", "expect_column_values_to_be_json_parseable"})
"""What a suite may expect of a bulky column for its stand-in to give the same result."""


def _parsed_columns(gate: StageGate) -> dict[str, set[str]]:
    """Per table, the bulky columns whose cells must parse as JSON; an error if a suite expects anything else of one,
    or holds an expectation whose results over parts do not add up (`merge.summable`)."""
    parsed: dict[str, set[str]] = {}
    for table, suite in gate.build().items():
        bulky = set(gate.bulky.get(table, ()))
        for expectation in suite.expectations:
            config = expectation.configuration
            if not summable(config.type):
                raise CoworkEnvError(f"gate {gate.stage!r}: {config.type} on {table} cannot be judged a part at a time")
            touched = bulky & set(expectation_columns(dict(config.kwargs)))
            if touched and config.type not in STAND_IN_SAFE:
                raise CoworkEnvError(
                    f"gate {gate.stage!r}: {config.type} reads bulky column(s) {', '.join(sorted(touched))} of {table}"
                )
            if touched and config.type == "expect_column_values_to_be_json_parseable":
                parsed.setdefault(table, set()).update(touched)
    return parsed


def _judge(
    gate: StageGate, chunks: Mapping[str, Iterable[Any]], report_dir: str | Path | None, started: float
) -> GateResult:
    """Run the suites over each table's derived frames (the table in parts, in row order); the report, then the
    result (or `GateFailed`)."""
    stage = gate.stage
    docs_dir = Path(report_dir).absolute() / DOCS_FOLDER / stage if report_dir is not None else None
    if docs_dir is not None:
        shutil.rmtree(docs_dir, ignore_errors=True)  # a rerun's report replaces the last one's, pages and all
    report_error = None
    context, suites, results, rows = _validate(gate, chunks, docs_dir / GX_FOLDER if docs_dir is not None else None)
    if docs_dir is not None:
        report_error = _build_docs(context, docs_dir / GX_FOLDER)

    failures: list[FailedExpectation] = []
    outcomes: list[ExpectationOutcome] = []
    per_table: dict[str, dict[str, int]] = {}
    for table, suite_result in results.items():
        order = {e.meta["rule"]: i for i, e in enumerate(suites[table].expectations)}
        table_failures, table_outcomes = [], []
        for item in suite_result.results:
            failure = None if item.success else failure_of(table, item, gate.id_columns.get(table, ()))
            table_outcomes.append(outcome_of(table, item, failure))
            if failure is not None:
                table_failures.append(failure)
        # GX reports table-level expectations last; keep the suite's order (columns first, then as written)
        failures.extend(sorted(table_failures, key=lambda f: order.get(f.rule, len(order))))
        outcomes.extend(sorted(table_outcomes, key=lambda o: order.get(o.rule, len(order))))
        per_table[table] = {
            "rows": rows[table],
            "expectations": len(suite_result.results),
            "failed": len(table_failures),
        }
    evaluated = len(outcomes)
    successful = evaluated - len(failures)
    statistics: dict[str, Any] = {
        "evaluated_expectations": evaluated,
        "successful_expectations": successful,
        "unsuccessful_expectations": evaluated - successful,
        "success_percent": round(100.0 * successful / evaluated, 2) if evaluated else 100.0,
        "tables": per_table,
        "seconds": round(time.perf_counter() - started, 3),
    }
    result = GateResult(
        stage=stage, success=not failures, statistics=statistics, failures=failures, expectations=outcomes
    )
    if docs_dir is not None:
        result = _with_report(result, docs_dir, report_error)
    if not result.success:
        raise GateFailed(result)
    return result


def _with_report(result: GateResult, docs_dir: Path, site_error: str | None) -> GateResult:
    """The result with its report page written (and its path), or with why it could not be."""
    try:
        index = write_page(docs_dir, result, gx_pages(docs_dir / GX_FOLDER, list(result.statistics["tables"]), SOURCE))
    except (OSError, CoworkEnvError) as exc:
        log.warning("the gate's report could not be written to %s: %s", docs_dir, exc)
        return result.model_copy(
            update={"statistics": {**result.statistics, "report_error": f"{type(exc).__name__}: {exc}"}}
        )
    statistics = {**result.statistics, "report_error": site_error} if site_error else result.statistics
    return result.model_copy(update={"report_path": str(index), "statistics": statistics})


@contextmanager
def quiet_gx() -> Iterator[None]:
    """Great Expectations without its noise while a gate runs: its loggers at WARNING (its INFO lines are registry
    and config chatter: some 200 at its first import), its own warnings (deprecated modules it imports) ignored.
    Progress bars are off in the context's config (`_context`). Levels and filters are restored afterwards."""
    logger = logging.getLogger("great_expectations")
    level = logger.level
    logger.setLevel(logging.WARNING)
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", module=r"great_expectations(\.|$)")
            yield
    finally:
        logger.setLevel(level)


# --- GX plumbing ------------------------------------------------------------------------------------------------


def _context(docs_dir: Path | None) -> Any:
    import great_expectations as gx
    from great_expectations.data_context.types.base import (
        DataContextConfig,
        InMemoryStoreBackendDefaults,
        ProgressBarsConfig,
    )

    sites = {}
    if docs_dir is not None:
        sites[SITE_NAME] = {
            "class_name": "SiteBuilder",
            "store_backend": {"class_name": "TupleFilesystemStoreBackend", "base_directory": str(docs_dir)},
            "site_index_builder": {"class_name": "DefaultSiteIndexBuilder"},
        }
    config = DataContextConfig(
        store_backend_defaults=InMemoryStoreBackendDefaults(init_temp_docs_sites=False),
        analytics_enabled=False,
        progress_bars=ProgressBarsConfig(globally=False, metric_calculations=False),
        data_docs_sites=sites,
    )
    return gx.get_context(mode="ephemeral", project_config=config)


def _validate(
    gate: StageGate, chunks: Mapping[str, Iterable[Any]], docs_dir: Path | None
) -> tuple[Any, dict[str, Any], dict[str, Any], dict[str, int]]:
    """The context the run used (its stores feed Data Docs), the suites, each table's validation result and rows.

    A table in parts is validated part by part: the first part through its validation definition (which stores
    the result Data Docs shows), the others as batches of the same asset; the parts' results are then added up
    (`merged_suite_result`) and the sum replaces the stored first part."""
    import great_expectations as gx
    from great_expectations.core.run_identifier import RunIdentifier

    context = _context(docs_dir)
    source = context.data_sources.add_pandas(SOURCE)
    suites = gate.build()
    run_id = RunIdentifier(run_name=gate.stage, run_time=datetime.now(UTC))
    results: dict[str, Any] = {}
    rows: dict[str, int] = {}
    for table in gate.tables:
        batch = source.add_dataframe_asset(table).add_batch_definition_whole_dataframe(table)
        suite = context.suites.add(suites[table])
        definition = context.validation_definitions.add(
            gx.ValidationDefinition(name=suite.name, data=batch, suite=suite)
        )
        parts, rows[table] = [], 0
        for frame in chunks[table]:
            rows[table] += len(frame)
            if not parts:  # every part has the first one's columns
                result_format = _result_format(gate.id_columns.get(table, ()), frame)
                parts.append(
                    definition.run(batch_parameters={"dataframe": frame}, result_format=result_format, run_id=run_id)
                )
            else:
                parts.append(
                    batch.get_batch(batch_parameters={"dataframe": frame}).validate(suite, result_format=result_format)
                )
        # GX keeps the last batch of each asset loaded: the table's last part, which nothing reads again.
        manager = source.get_execution_engine().batch_manager
        manager.reset_batch_cache()
        manager.batch_data_cache.clear()
        results[table] = merged_suite_result(parts, DOCS_EXAMPLES)
        if len(parts) > 1:
            store = context.validation_results_store
            for key in store.list_keys():
                if key.expectation_suite_identifier.name == suite.name:
                    store.set(key, results[table])
    return context, suites, results, rows


def _result_format(ids: tuple[str, ...], frame: Any) -> dict[str, Any]:
    result_format: dict[str, Any] = {"result_format": "SUMMARY", "partial_unexpected_count": DOCS_EXAMPLES}
    present = [col for col in ids if col in frame.columns]
    if present:
        result_format["unexpected_index_column_names"] = present
        result_format["return_unexpected_index_query"] = False
    return result_format


def _build_docs(context: Any, site: Path) -> str | None:
    """GX's Data Docs site, rewritten to render offline; why it could not be written, or None."""
    try:
        site.mkdir(parents=True, exist_ok=True)
        context.build_data_docs(site_names=[SITE_NAME])
        make_offline(site)
    except Exception as exc:  # noqa: BLE001 — a renderer problem must not hide the gate's verdict
        log.warning("Great Expectations' Data Docs could not be written to %s: %s", site, exc)
        return f"{type(exc).__name__}: {exc}"
    return None
