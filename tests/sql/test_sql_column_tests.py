"""The column tests of `sql/*/schema.yml` (`coworkenv.data.sql_tests`): they pass on the fixture releases, they
catch a broken view, and a schema entry naming something that does not exist is an error, not a pass."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from coworkenv.data import catalog, sql_tests
from coworkenv.data.publisher import publish_release
from coworkenv.data.schemas import TABLES
from coworkenv.errors import CoworkEnvError
from tests.sql.release_fixture import rows


@pytest.fixture(scope="module")
def tests() -> list[sql_tests.ColumnTest]:
    return sql_tests.load_tests()


def _copy_sql(tmp_path: Path) -> Path:
    """A copy of sql/ (views and schema files) to break."""
    copy = tmp_path / "sql"
    shutil.copytree(catalog.SQL_DIR, copy)
    return copy


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_every_view_has_column_tests_in_its_folder(tests):
    tested = {(t.source, t.view) for t in tests}
    for name, path in catalog.view_files():
        assert (f"sql/{path.parent.name}/{sql_tests.SCHEMA_FILE}", name) in tested, (
            f"{name} has no test in its folder's schema.yml"
        )
    kinds = {t.kind for t in tests}
    assert kinds == set(sql_tests.COLUMN_TESTS) | set(sql_tests.VIEW_TESTS)


@pytest.mark.parametrize("selection", ["latest", "all"])
def test_column_tests_pass_on_the_fixture_releases(tests, latest_con, all_con, selection):
    con = latest_con if selection == "latest" else all_con
    assert sql_tests.run_tests(con, tests) == []


def test_views_and_column_tests_work_on_a_release_without_data(tests, tmp_path):
    publish_release({}, data_root=tmp_path, run_id="empty", parent=None, config={})
    con = catalog.connect(tmp_path)
    for table in TABLES:
        assert rows(con, f"select count(*) as n from src_{table}") == [{"n": 0}]
    for view, _ in catalog.view_files():
        catalog.run_query(con, f"select * from {view}")
    assert rows(con, "select count(*) as n from eval_group_pass_rates") == [{"n": 0}]
    assert sql_tests.run_tests(con, tests) == []


def test_a_broken_view_fails_its_tests_with_counts_and_examples(releases, all_con, tmp_path):
    sql_dir = _copy_sql(tmp_path)
    # every family twice, and one family's tasks without a family
    _edit(
        sql_dir / "marts" / "valid_share_by_family.sql",
        "from all_specs\nleft join",
        "from all_specs\ncross join range(2)\nleft join",
    )
    _edit(
        sql_dir / "intermediate" / "task_status.sql",
        "coalesce(tasks.family, verdicts.family_from_id) as family",
        "nullif(coalesce(tasks.family, verdicts.family_from_id), 'doc_lookup') as family",
    )
    con = catalog.connect(releases.root, "all", sql_dir=sql_dir)
    failures = {f.test.name: f for f in sql_tests.run_tests(con, sql_tests.load_tests(sql_dir))}
    (families,) = rows(all_con, "select count(*) as n from valid_share_by_family where family <> 'doc_lookup'")
    duplicated = failures["unique(valid_share_by_family.family)"]
    assert duplicated.n_rows == 2 * families["n"]  # the null family is not_null's business, not unique's
    assert len(duplicated.examples) == sql_tests.EXAMPLES
    assert duplicated.line().startswith("sql/marts/schema.yml: unique(valid_share_by_family.family) failed on ")
    assert f"release_id='{releases.r1.release_id}', family='chat_digest' (2 rows)" in duplicated.line()
    missing = failures["not_null(task_status.family)"]
    assert (
        missing.n_rows == rows(all_con, "select count(*) as n from task_status where family = 'doc_lookup'")[0]["n"] > 0
    )
    assert missing.line().startswith("sql/intermediate/schema.yml: not_null(task_status.family) failed on ")
    assert f"release_id='{releases.r2.release_id}'" in missing.line() and "\n" not in missing.line()
    assert "not_null(valid_share_by_family.family)" in failures  # the broken intermediate view breaks the mart too


def test_bad_data_fails_the_keys_of_the_staging_views(releases, duplicated_rl_root):
    con = catalog.connect(duplicated_rl_root)
    failures = {f.test.name: f for f in sql_tests.run_tests(con, sql_tests.load_tests())}
    assert set(failures) == {"unique(stg_rl.task_id)"}
    assert failures["unique(stg_rl.task_id)"].n_rows == 2 * releases.r2.rows["rl"]


def _schema_with(tmp_path: Path, *models: dict) -> Path:
    """A copy of sql/ whose marts/schema.yml has `models` in place of the entries of the same names."""
    sql_dir = _copy_sql(tmp_path)
    path = sql_dir / "marts" / sql_tests.SCHEMA_FILE
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    doc["models"] = [m for m in doc["models"] if m["name"] not in {m["name"] for m in models}] + list(models)
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return sql_dir


def _overview(column: str, test: str | dict) -> dict:
    """A release_overview entry with one column test."""
    return {"name": "release_overview", "columns": [{"name": column, "tests": [test]}]}


@pytest.mark.parametrize(
    ("models", "message"),
    [
        ([{"name": "no_such_view"}], "view 'no_such_view' is not defined in marts/"),
        ([{"name": "task_status"}], "view 'task_status' is not defined in marts/; it is in intermediate/"),
        ([{"name": "sft_token_counts"}] * 2, "view 'sft_token_counts' is listed twice"),
        ([_overview("n_tasks", "not_nul")], "unknown test 'not_nul' here"),
        ([{"name": "release_overview", "columns": [{"name": "n_tasks", "test": ["not_null"]}]}], "unknown key 'test'"),
        (
            [{"name": "release_overview", "tests": ["not_null"]}],
            "unknown test 'not_null' here (known: unique_combination)",
        ),
        (
            [_overview("n_tasks", {"accepted_values": {"values": []}})],
            "accepted_values needs 'values': a non-empty list of values",
        ),
        ([_overview("n_tasks", {"relationships": {"to": "stg_tasks"}})], "relationships needs 'field'"),
    ],
)
def test_a_malformed_schema_entry_is_an_error(tmp_path, models, message):
    sql_dir = _schema_with(tmp_path, *models)
    with pytest.raises(CoworkEnvError) as info:
        sql_tests.load_tests(sql_dir)
    assert str(info.value).startswith("sql/marts/schema.yml: ") and message in str(info.value)


@pytest.mark.parametrize(
    ("model", "message"),
    [
        (
            _overview("n_task", "not_null"),
            "not_null(release_overview.n_task): release_overview has no column 'n_task' (did you mean 'n_tasks'?)",
        ),
        (
            {"name": "release_overview", "tests": [{"unique_combination": {"columns": ["n_tasks", "nope"]}}]},
            "release_overview has no column 'nope'",
        ),
        (
            _overview("release_id", {"relationships": {"to": "stg_releasez", "field": "release_id"}}),
            "no relation 'stg_releasez' (did you mean",
        ),
        (
            _overview("release_id", {"relationships": {"to": "stg_releases", "field": "id"}}),
            "stg_releases has no column 'id'",
        ),
    ],
)
def test_an_unknown_column_or_relation_is_an_error(releases, tmp_path, model, message):
    sql_dir = _schema_with(tmp_path, model)
    tests = sql_tests.load_tests(sql_dir)
    con = catalog.connect(releases.root, sql_dir=sql_dir)
    with pytest.raises(CoworkEnvError) as info:
        sql_tests.run_tests(con, tests)
    assert str(info.value).startswith("sql/marts/schema.yml: ") and message in str(info.value)


def test_invalid_yaml_names_the_file_and_line(tmp_path):
    sql_dir = _copy_sql(tmp_path)
    (sql_dir / "staging" / sql_tests.SCHEMA_FILE).write_text("models:\n  - name: stg_tasks\n bad: [\n")
    with pytest.raises(CoworkEnvError, match=r"^sql/staging/schema\.yml:3: not valid YAML"):
        sql_tests.load_tests(sql_dir)


def test_a_test_duckdb_rejects_is_an_error_naming_the_test(releases, tmp_path):
    sql_dir = _schema_with(tmp_path, _overview("n_tasks", {"accepted_values": {"values": ["many"]}}))
    con = catalog.connect(releases.root, sql_dir=sql_dir)
    with pytest.raises(CoworkEnvError, match=r"accepted_values\(release_overview\.n_tasks\): Conversion Error"):
        sql_tests.run_tests(con, sql_tests.load_tests(sql_dir))
