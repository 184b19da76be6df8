"""Column tests beside the SQL views, in dbt's layout: one `schema.yml` per view folder of `sql/`.

    models:
      - name: stg_task_capabilities          # a view defined in this folder
        tests:                               # tests on several columns
          - unique_combination: {columns: [task_id, capability]}
        columns:
          - name: task_id
            tests:
              - not_null
              - relationships: {to: stg_tasks, field: task_id}
          - name: difficulty
            tests:
              - accepted_values: {values: [1, 2, 3, 4, 5]}

Column tests: `not_null`, `unique`, `accepted_values: {values: [...]}`, `relationships: {to: <relation>, field:
<column>}`; view tests: `unique_combination: {columns: [...]}`. A view or column that does not exist is an error,
not a failure. Every view holds `release_id` and a release stands alone, so keys (`unique`, `unique_combination`)
and `relationships` hold within each release: over `--release all` a task is in several releases, and a repair
must point at a task of its own release. Nulls pass every test but `not_null`, as in dbt.

Each test is one query returning the failing rows grouped by the values at fault (`n_rows` per group); a test
fails when that query returns anything.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from difflib import get_close_matches
from pathlib import Path
from typing import Any

import duckdb

from coworkenv.data.catalog import SQL_DIR, STAGES, one_line, view_files
from coworkenv.errors import CoworkEnvError
from coworkenv.fileio import parse_yaml

SCHEMA_FILE = "schema.yml"
COLUMN_TESTS = ("not_null", "unique", "accepted_values", "relationships")
VIEW_TESTS = ("unique_combination",)
ARGUMENTS = {
    "accepted_values": {"values": "a non-empty list of values"},
    "relationships": {"to": "the name of a view or table", "field": "a column name"},
    "unique_combination": {"columns": "a non-empty list of column names"},
}
EXAMPLES = 3
SCOPE = "release_id"
"""Keys and relationships hold within a release: the column every view has (unless a test is about it)."""


@dataclass(frozen=True)
class ColumnTest:
    """One test from a schema file: `kind` on `columns` of `view`, with the test's arguments."""

    source: str  # the schema file, relative to the folder above sql/ (`sql/marts/schema.yml`)
    view: str
    kind: str
    columns: tuple[str, ...]
    args: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def name(self) -> str:
        if self.kind == "unique_combination":
            return f"unique_combination({self.view}: {', '.join(self.columns)})"
        target = f" -> {self.args['to']}.{self.args['field']}" if self.kind == "relationships" else ""
        return f"{self.kind}({self.view}.{self.columns[0]}{target})"


@dataclass(frozen=True)
class ColumnTestFailure:
    """A failed test: how many rows fail it, and a few of the failing groups (`release_id='r2', task_id='x' (2 rows)`)."""

    test: ColumnTest
    n_rows: int
    examples: tuple[str, ...]

    def line(self) -> str:
        return f"{self.test.source}: {self.test.name} failed on {_rows(self.n_rows)}, e.g. {'; '.join(self.examples)}"


def _rows(n: int) -> str:
    return f"{n} row{'s' if n != 1 else ''}"


def _hint(name: str, known: list[str] | set[str]) -> str:
    close = get_close_matches(name, sorted(known), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


# --- schema files ---------------------------------------------------------------------------------------------


def _mapping(value: Any, where: str, allowed: set[str], required: tuple[str, ...] = ()) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise CoworkEnvError(f"{where}: expected a mapping, got {type(value).__name__}")
    unknown = sorted(set(value) - allowed)
    if unknown:
        raise CoworkEnvError(f"{where}: unknown key {unknown[0]!r} (allowed: {', '.join(sorted(allowed))})")
    for key in required:
        if not isinstance(value.get(key), str) or not value[key]:
            raise CoworkEnvError(f"{where}: {key!r} must be a non-empty string")
    return value


def _items(value: Any, where: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise CoworkEnvError(f"{where}: expected a list, got {type(value).__name__}")
    return value


def _valid_argument(key: str, value: Any) -> bool:
    if key in ("to", "field"):
        return isinstance(value, str) and bool(value)
    scalar = str if key == "columns" else (str, int, float, bool)
    return isinstance(value, list) and bool(value) and all(isinstance(v, scalar) for v in value)


def _test(entry: Any, where: str, allowed: tuple[str, ...]) -> tuple[str, dict[str, Any]]:
    """`name` or `{name: {args}}` → (name, args), the arguments checked."""
    if isinstance(entry, str):
        kind, args = entry, {}
    elif isinstance(entry, dict) and len(entry) == 1:
        ((kind, args),) = entry.items()
    else:
        raise CoworkEnvError(f"{where}: a test is a name or a one-key mapping {{name: {{arguments}}}}, got {entry!r}")
    if kind not in allowed:
        raise CoworkEnvError(f"{where}: unknown test {kind!r} here (known: {', '.join(allowed)})")
    expected = ARGUMENTS.get(kind, {})
    args = _mapping(args if args is not None else {}, f"{where}: {kind}", set(expected))
    for key, what in expected.items():
        if not _valid_argument(key, args.get(key)):
            raise CoworkEnvError(f"{where}: {kind} needs {key!r}: {what}")
    return kind, args


def _parse(path: Path, source: str, stage: str, folders: dict[str, str]) -> list[ColumnTest]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CoworkEnvError(f"{source}: cannot read ({getattr(exc, 'strerror', None) or exc})") from None
    doc = parse_yaml(text, source)
    doc = _mapping(doc if doc is not None else {}, source, {"version", "models"})
    tests: list[ColumnTest] = []
    listed: set[str] = set()
    for i, model in enumerate(_items(doc.get("models"), f"{source}: models")):
        model = _mapping(model, f"{source}: models[{i}]", {"name", "description", "columns", "tests"}, ("name",))
        view = model["name"]
        if folders.get(view) != stage:
            elsewhere = (
                f"; it is in {folders[view]}/"
                if view in folders
                else _hint(view, [v for v, s in folders.items() if s == stage])
            )
            raise CoworkEnvError(f"{source}: view {view!r} is not defined in {stage}/{elsewhere}")
        if view in listed:
            raise CoworkEnvError(f"{source}: view {view!r} is listed twice")
        listed.add(view)
        for entry in _items(model.get("tests"), f"{source}: {view}: tests"):
            kind, args = _test(entry, f"{source}: {view}", VIEW_TESTS)
            tests.append(ColumnTest(source, view, kind, tuple(args["columns"]), args))
        for j, column in enumerate(_items(model.get("columns"), f"{source}: {view}: columns")):
            column = _mapping(column, f"{source}: {view}: columns[{j}]", {"name", "description", "tests"}, ("name",))
            for entry in _items(column.get("tests"), f"{source}: {view}.{column['name']}: tests"):
                kind, args = _test(entry, f"{source}: {view}.{column['name']}", COLUMN_TESTS)
                tests.append(ColumnTest(source, view, kind, (column["name"],), args))
    return tests


def load_tests(sql_dir: Path | None = None) -> list[ColumnTest]:
    """Every test of `<sql_dir>/<stage>/schema.yml`, in `STAGES` order; a schema entry for a view that its folder
    does not define, an unknown test or malformed arguments raise `CoworkEnvError`."""
    base = (Path(sql_dir) if sql_dir is not None else SQL_DIR).resolve()
    folders = {name: path.parent.name for name, path in view_files(base)}
    tests: list[ColumnTest] = []
    for stage in STAGES:
        path = base / stage / SCHEMA_FILE
        if path.is_file():
            tests += _parse(path, path.relative_to(base.parent).as_posix(), stage, folders)
    return tests


# --- running --------------------------------------------------------------------------------------------------


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _literal(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    return "'" + str(value).replace("'", "''") + "'"


def relation_columns(con: duckdb.DuckDBPyConnection, tests: list[ColumnTest]) -> dict[str, list[str]]:
    """The columns of every relation the tests name; an unknown relation or column raises `CoworkEnvError`."""
    # the main schema only: the catalog keeps the empty typed tables behind `src_*` in a schema of its own
    relations = {
        name
        for (name,) in con.execute(
            "select table_name from information_schema.tables where table_schema = 'main'"
        ).fetchall()
    }
    columns: dict[str, list[str]] = {}
    for test in tests:
        wanted = [(test.view, test.columns)]
        if test.kind == "relationships":
            wanted.append((test.args["to"], (test.args["field"],)))
        for relation, names in wanted:
            if relation not in relations:
                raise CoworkEnvError(
                    f"{test.source}: {test.name}: no relation {relation!r}{_hint(relation, relations)}"
                )
            if relation not in columns:
                columns[relation] = [c[0] for c in con.execute(f"select * from {_ident(relation)} limit 0").description]
            for name in names:
                if name not in columns[relation]:
                    raise CoworkEnvError(
                        f"{test.source}: {test.name}: {relation} has no column {name!r}{_hint(name, columns[relation])}"
                    )
    return columns


def failing_sql(test: ColumnTest, columns: dict[str, list[str]]) -> tuple[str, list[str]]:
    """The query returning the rows that fail `test`, grouped (`n_rows` per group), and its group columns."""
    scope = [SCOPE] if SCOPE in columns[test.view] and SCOPE not in test.columns else []
    keys = scope + ([] if test.kind == "not_null" else list(test.columns))
    first = f"child.{_ident(test.columns[0])}"
    source = f"{_ident(test.view)} as child"
    condition = f"{first} is not null"
    if test.kind == "not_null":
        condition = f"{first} is null"
    elif test.kind == "unique_combination":
        condition = "true"
    elif test.kind == "accepted_values":
        condition += f" and {first} not in ({', '.join(_literal(v) for v in test.args['values'])})"
    elif test.kind == "relationships":
        on = [f"parent.{_ident(test.args['field'])} = {first}"]
        if scope and SCOPE in columns[test.args["to"]]:
            on.append(f"parent.{SCOPE} = child.{SCOPE}")
        source += f" anti join {_ident(test.args['to'])} as parent on {' and '.join(on)}"
    having = "count(*) > 1" if test.kind in ("unique", "unique_combination") else "count(*) > 0"
    select = ", ".join([f"child.{_ident(k)}" for k in keys] + ["count(*) as n_rows"])
    return f"select {select} from {source} where {condition} group by all having {having}", keys


def _example(row: tuple[Any, ...], keys: list[str]) -> str:
    values = ", ".join(f"{k}={_literal(v)[:60] if v is not None else 'null'}" for k, v in zip(keys, row, strict=False))
    return f"{values} ({_rows(row[len(keys)])})" if values else _rows(row[len(keys)])


def run_tests(con: duckdb.DuckDBPyConnection, tests: list[ColumnTest]) -> list[ColumnTestFailure]:
    """Run `tests` over a catalog connection (`coworkenv.data.catalog.connect`); the failures, in test order.

    Names are checked first (`relation_columns`); a test whose query DuckDB rejects raises `CoworkEnvError`."""
    columns = relation_columns(con, tests)
    failures = []
    for test in tests:
        sql, keys = failing_sql(test, columns)
        order = ", ".join(["n_rows desc"] + [str(i + 1) for i in range(len(keys))])
        try:
            found = con.execute(
                f"select *, sum(n_rows) over () from ({sql}) order by {order} limit {EXAMPLES}"
            ).fetchall()
        except duckdb.Error as exc:
            raise CoworkEnvError(f"{test.source}: {test.name}: {one_line(exc)}") from None
        if found:
            failures.append(ColumnTestFailure(test, int(found[0][-1]), tuple(_example(row, keys) for row in found)))
    return failures
