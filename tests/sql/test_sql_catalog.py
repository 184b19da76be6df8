"""The catalog: which releases are read, the `src_*` relations, the view files and their loading, errors."""

from __future__ import annotations

import json
import re
import shutil

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from coworkenv.data import catalog, reader
from coworkenv.data.schemas import TABLES
from coworkenv.errors import CoworkEnvError
from tests.sql.release_fixture import rows
from tests.support.releases import edit_manifest

STAGING = {p.stem for p in (catalog.SQL_DIR / "staging").glob("*.sql")}
INTERMEDIATE = {p.stem for p in (catalog.SQL_DIR / "intermediate").glob("*.sql")}
MARTS = {p.stem for p in (catalog.SQL_DIR / "marts").glob("*.sql")}
VIEWS = STAGING | INTERMEDIATE | MARTS
REQUIRED_MARTS = {
    "valid_share_by_family",
    "rejection_reasons_by_family",
    "repair_rescue_by_code",
    "coverage_difficulty_capability",
    "discrimination_distribution",
    "sft_token_counts",
    "eval_pass_rates",
}
SQL_KEYWORDS = r"\b(SELECT|FROM|WHERE|GROUP|ORDER|JOIN|WITH|AS|AND|OR|NOT|CASE|WHEN|THEN|ELSE|END|OVER|PARTITION|UNION|LEFT|FILTER)\b"


# --- releases -------------------------------------------------------------------------------------------------


def test_all_is_what_the_reader_lists_skipping_tmp_and_folders_without_manifest(releases):
    r1, r2 = releases.r1.release_id, releases.r2.release_id
    selected = catalog.resolve_releases(releases.root, "all")
    assert [r.release_id for r in selected] == [m.release_id for m in reader.list_releases(releases.root)] == [r1, r2]
    assert [r.path for r in selected] == [str(releases.path(releases.r1)), str(releases.path(releases.r2))]
    assert [r.manifest.parent for r in selected] == [None, r1]


def test_resolve_latest_all_and_id(releases):
    r1, r2 = releases.r1.release_id, releases.r2.release_id
    assert (
        [r.release_id for r in catalog.resolve_releases(releases.root, "latest")]
        == [reader.latest_release(releases.root)]
        == [r2]
    )
    assert [r.release_id for r in catalog.resolve_releases(releases.root, "all")] == [r1, r2]
    assert [r.release_id for r in catalog.resolve_releases(releases.root, r1)] == [r1]


@pytest.mark.parametrize("release", ["r3", ".tmp-publishing", "no-manifest", "../data"])
def test_unknown_release_is_a_one_line_error(releases, release):
    with pytest.raises(CoworkEnvError, match="unknown release") as info:
        catalog.resolve_releases(releases.root, release)
    assert "\n" not in str(info.value)


def test_unknown_release_suggests_a_close_id(releases):
    r2 = releases.r2.release_id
    with pytest.raises(CoworkEnvError, match=f"did you mean '{r2}'"):
        catalog.resolve_releases(releases.root, r2 + "2")


def test_a_damaged_manifest_is_named_not_unknown(releases, tmp_path):
    release = releases.copy(releases.r1, tmp_path)
    (release / "manifest.json").write_text("{")
    with pytest.raises(CoworkEnvError, match="manifest.json: unreadable manifest"):
        catalog.resolve_releases(tmp_path, releases.r1.release_id)


def test_no_release_at_all(tmp_path):
    for release in ("latest", "all", "r1"):
        with pytest.raises(CoworkEnvError, match="no release|unknown release"):
            catalog.connect(tmp_path, release)


def test_missing_latest_pointer_names_the_releases_found(releases, tmp_path):
    r1 = releases.r1.release_id
    releases.copy(releases.r1, tmp_path, latest=False)
    with pytest.raises(CoworkEnvError, match=rf"LATEST is missing.*found {r1}"):
        catalog.connect(tmp_path)
    assert rows(catalog.connect(tmp_path, "all"), "select distinct release_id from src_tasks") == [{"release_id": r1}]


def test_latest_pointing_at_a_temporary_dir_is_an_error(releases, tmp_path):
    shutil.copytree(releases.root / "releases" / ".tmp-publishing", tmp_path / "releases" / ".tmp-publishing")
    (tmp_path / "releases" / "LATEST").write_text(".tmp-publishing\n")
    with pytest.raises(CoworkEnvError, match="not a complete release"):
        catalog.connect(tmp_path)


# --- src_* relations ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("table", list(TABLES))
def test_src_has_the_full_schema_plus_release_id(latest_con, table):
    columns = [r["column_name"] for r in rows(latest_con, f"describe src_{table}")]
    assert columns == [*TABLES[table].names, "release_id"]


@pytest.mark.parametrize("table", list(TABLES))
def test_src_row_counts_match_what_was_written(releases, latest_con, all_con, table):
    (latest,) = rows(
        latest_con, f"select count(*) as n, count(distinct release_id) as k, min(release_id) as r from src_{table}"
    )
    assert latest["n"] == releases.r2.rows[table]
    assert latest["n"] == 0 or (latest["k"], latest["r"]) == (1, releases.r2.release_id)
    counts = {
        r["release_id"]: r["n"]
        for r in rows(all_con, f"select release_id, count(*) as n from src_{table} group by all")
    }
    expected = {truth.release_id: truth.rows[table] for truth in (releases.r1, releases.r2) if truth.rows[table]}
    assert counts == expected


def test_release_all_adds_release_id_and_ignores_the_debris(releases, all_con):
    r1, r2 = releases.r1.release_id, releases.r2.release_id
    ids = rows(all_con, "select release_id, count(*) as n from stg_tasks group by all order by release_id")
    assert ids == [
        {"release_id": r1, "n": releases.r1.rows["tasks"]},
        {"release_id": r2, "n": releases.r2.rows["tasks"]},
    ]
    # the copies in .tmp-publishing/ and no-manifest/ are nowhere, under any relation
    for table in TABLES:
        assert rows(all_con, f"select count(*) as n from src_{table} where release_id not in ('{r1}', '{r2}')") == [
            {"n": 0}
        ]
    assert [r["release_id"] for r in rows(all_con, "select release_id from stg_releases order by release_order")] == [
        r1,
        r2,
    ]


def test_partitions_and_part_files_read_back_whole(releases, all_con):
    for truth in (releases.r1, releases.r2):
        families = {
            r["family"]
            for r in rows(all_con, f"select distinct family from src_tasks where release_id = '{truth.release_id}'")
        }
        assert families == truth.families
    mismatched = "select count(*) as n from stg_tasks where family <> split_part(task_id, '-', 1)"
    assert rows(all_con, mismatched) == [{"n": 0}]
    split = [p.parent for p in releases.path(releases.r2).glob("trajectories/family=*/part-1.parquet")]
    assert split, "the publisher split some trajectory partitions (conftest.PART_ROWS)"
    for folder in split:
        family = folder.name.removeprefix("family=")
        got = rows(
            all_con,
            f"select count(*) as n from src_trajectories where family = '{family}' and release_id = '{releases.r2.release_id}'",
        )
        assert got == [{"n": sum(pq.read_metadata(p).num_rows for p in folder.glob("*.parquet"))}]


def test_a_release_can_be_picked_by_id(releases):
    r1 = releases.r1.release_id
    con = catalog.connect(releases.root, r1)
    assert rows(con, "select distinct release_id from src_tasks") == [{"release_id": r1}]
    assert rows(con, "select count(*) as n from stg_trajectories") == [{"n": 0}]  # empty table: one empty file
    assert rows(con, "select is_latest from stg_releases") == [{"is_latest": False}]


def test_src_releases_carry_the_manifests(releases, all_con):
    got = rows(
        all_con,
        "select release_id, parent, created_at, row_counts::varchar as counts, manifest->>'run_id' as run_id from stg_releases",
    )
    for r, manifest in zip(got, reader.list_releases(releases.root), strict=True):
        assert (r["release_id"], r["parent"], r["run_id"]) == (manifest.release_id, manifest.parent, manifest.run_id)
        assert r["created_at"] == manifest.created_at and json.loads(r["counts"]) == manifest.row_counts


def test_a_table_missing_from_a_release_reads_as_empty(releases, tmp_path):
    release = releases.copy(releases.r2, tmp_path)
    shutil.rmtree(release / "sft")  # as in a release published before the table existed: not in its manifest either
    edit_manifest(
        release,
        lambda m: [m[key].pop("sft") for key in ("files", "row_counts", "content_hashes", "schema_fingerprints")],
    )
    con = catalog.connect(tmp_path)
    assert rows(con, "select count(*) as n, sum(total_tokens) as t from sft_token_counts") == [{"n": 0, "t": None}]


# --- view files -----------------------------------------------------------------------------------------------


def test_every_table_has_a_staging_view_and_the_issue_marts_exist():
    assert {f"stg_{t}" for t in TABLES} <= STAGING
    assert REQUIRED_MARTS <= MARTS
    # the building blocks other views read are intermediate, not marts
    assert {"task_status", "eval_task_trials", "eval_task_pass_k", "eval_group_pass_rates"} <= INTERMEDIATE


@pytest.mark.parametrize("path", sorted(catalog.SQL_DIR.glob("*/*.sql")), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_sql_files_start_with_a_comment_are_lowercase_and_hold_one_statement(path):
    text = path.read_text(encoding="utf-8")
    assert text.startswith("-- "), "every file starts with a comment saying what it answers"
    body = catalog.strip_sql(text)
    assert ";" not in re.sub(r"'[^']*'", "''", body), "one statement per file"
    assert not re.search(SQL_KEYWORDS, re.sub(r"'[^']*'", "''", body)), "lowercase SQL"
    if path.parent.name != "queries":
        assert body.startswith(("with", "select")), "a view file holds a single select (CTE chain)"


def test_views_load_staging_then_intermediate_then_marts_dependencies_first():
    order = [name for name, _ in catalog.view_files()]
    assert set(order) == VIEWS and len(order) == len(VIEWS)
    assert max(order.index(s) for s in STAGING) < min(order.index(i) for i in INTERMEDIATE)
    assert max(order.index(i) for i in INTERMEDIATE) < min(order.index(m) for m in MARTS)
    assert order.index("stg_tasks") < order.index("stg_task_capabilities")
    assert order.index("eval_task_trials") < order.index("eval_task_pass_k") < order.index("eval_group_pass_rates")


def test_a_view_name_is_unique_across_folders(tmp_path):
    for stage in catalog.STAGES:
        (tmp_path / stage).mkdir()
    (tmp_path / "staging" / "twice.sql").write_text("-- twice\nselect 1 as a")
    (tmp_path / "intermediate" / "twice.sql").write_text("-- twice\nselect 2 as a")
    with pytest.raises(CoworkEnvError, match="view 'twice' is defined in two folders"):
        catalog.view_files(tmp_path)


def test_view_dependency_cycle_is_reported(tmp_path):
    (tmp_path / "staging").mkdir()
    (tmp_path / "marts").mkdir()
    (tmp_path / "marts" / "a.sql").write_text("-- a\nselect * from b")
    (tmp_path / "marts" / "b.sql").write_text("-- b\nselect * from a")
    with pytest.raises(CoworkEnvError, match="circular view dependencies among a, b"):
        catalog.view_files(tmp_path)


def test_a_broken_view_file_names_the_file(releases, tmp_path):
    (tmp_path / "staging").mkdir()
    (tmp_path / "marts").mkdir()
    (tmp_path / "marts" / "broken.sql").write_text("-- broken\nselect nope from src_tasks")
    with pytest.raises(CoworkEnvError, match=r"broken\.sql: Binder Error: .*nope") as info:
        catalog.connect(releases.root, sql_dir=tmp_path)
    assert "\n" not in str(info.value)


def test_connection_lists_every_relation(latest_con):
    names = {r["name"] for r in rows(latest_con, "show tables")}
    assert {f"src_{t}" for t in TABLES} | {"src_releases", "ref_capabilities"} | VIEWS <= names


@pytest.mark.parametrize("view", sorted(VIEWS))
def test_every_view_runs_on_both_selections(latest_con, all_con, view):
    latest = catalog.run_query(latest_con, f"select * from {view}")
    everything = catalog.run_query(all_con, f"select * from {view}")
    assert "release_id" in latest.column_names
    assert latest.num_rows > 0
    assert everything.num_rows >= latest.num_rows


# --- query and errors -----------------------------------------------------------------------------------------


def test_query_returns_an_arrow_table(releases):
    table = catalog.query("select family, n_tasks from valid_share_by_family order by family", releases.root)
    assert isinstance(table, pa.Table)
    assert table.column_names == ["family", "n_tasks"]
    assert table.num_rows == len(releases.r2.valid_by_family)


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("selec 1", "Parser Error: syntax error"),
        ("select * from no_such_view", "Catalog Error: no table or view no_such_view; `show tables` lists them"),
        (
            "select * from tasks",
            "no table or view tasks; use src_tasks (as stored) or stg_tasks (typed, one row per key)",
        ),
        ("select nope from stg_tasks", 'Binder Error: Referenced column "nope" not found'),
        ("select 1 / 'x'", "Error"),
        ("  -- only a comment\n", "empty SQL"),
    ],
)
def test_bad_sql_is_one_line_with_duckdbs_message(latest_con, sql, message):
    with pytest.raises(CoworkEnvError) as info:
        catalog.run_query(latest_con, sql)
    text = str(info.value)
    assert message in text
    assert "\n" not in text and "LINE 1" not in text and "coworkenv_internal" not in text


def test_statements_without_rows_and_several_statements(latest_con):
    assert catalog.run_query(latest_con, "create or replace temp view x as select 1 as a").num_rows == 0
    assert catalog.run_query(latest_con, "select 1 as a; select 2 as b").to_pylist() == [{"b": 2}]
