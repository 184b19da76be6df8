"""`coworkenv sql`: formats, --file, --release, the data-root default and errors.

Output formats and input errors are checked in-process (the command function, stdout captured); the exit code,
the one-line stderr and the console script itself through a few real subprocesses.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import typer

from coworkenv.cli.sql import sql
from coworkenv.errors import CoworkEnvError
from tests.support import ROOT  # noqa: E402

CLI = Path(sys.executable).parent / "coworkenv"
QUERY = "select family, n_tasks, valid_share from valid_share_by_family order by family"


@pytest.fixture
def run_sql(releases, capsys, monkeypatch):
    """Call the command function as Typer would; returns (stdout, stderr)."""
    monkeypatch.setenv("COWORKENV_DATA_ROOT", str(releases.root))
    monkeypatch.delenv("COLUMNS", raising=False)

    def call(statement=None, *, file=None, release="latest", fmt="table", data_root=None, max_rows=200, test=False):
        sql(
            statement,
            file=None if file is None else Path(file),
            release=release,
            fmt=fmt,
            data_root=data_root,
            max_rows=max_rows,
            test=test,
        )
        captured = capsys.readouterr()
        return captured.out, captured.err

    return call


def test_table_format(run_sql, releases):
    out, err = run_sql(QUERY)
    header = out.splitlines()[1]
    assert "family" in header and "n_tasks" in header and "valid_share" in header
    for family in releases.r2.families:
        assert family in out
    assert err.strip() == f"{len(releases.r2.valid_by_family)} rows"


def test_csv_format(run_sql, releases):
    out, _ = run_sql(QUERY, fmt="csv")
    got = list(csv.DictReader(io.StringIO(out)))
    assert {r["family"]: int(r["n_tasks"]) for r in got} == {f: n for f, (n, _) in releases.r2.valid_by_family.items()}
    assert all(0 <= float(r["valid_share"]) <= 1 for r in got)


def test_json_format(run_sql, releases):
    out, _ = run_sql(QUERY, fmt="json")
    got = json.loads(out)
    assert {r["family"]: r["n_tasks"] for r in got} == {f: n for f, (n, _) in releases.r2.valid_by_family.items()}
    assert run_sql("select 1 as a where false", fmt="json")[0] == "[]\n"


def test_file_option_runs_an_example_query(run_sql, releases):
    out, _ = run_sql(file=ROOT / "sql" / "queries" / "sft_tokens_per_family.sql", fmt="csv")
    assert {r["family"] for r in csv.DictReader(io.StringIO(out))} == set(releases.r2.sft_tokens_by_family)


def test_release_all_and_by_id(run_sql, releases):
    r1, r2 = releases.r1, releases.r2
    out, _ = run_sql(
        "select release_id, count(*) as n from stg_tasks group by all order by 1", release="all", fmt="json"
    )
    assert json.loads(out) == [
        {"release_id": r1.release_id, "n": r1.rows["tasks"]},
        {"release_id": r2.release_id, "n": r2.rows["tasks"]},
    ]
    assert (
        run_sql("select distinct release_id from src_tasks", release=r1.release_id, fmt="csv")[0]
        == f"release_id\n{r1.release_id}\n"
    )


def test_data_root_option_wins_over_the_environment(run_sql, releases, monkeypatch):
    monkeypatch.setenv("COWORKENV_DATA_ROOT", "/nonexistent")
    out, _ = run_sql("select count(*) as n from stg_tasks", fmt="csv", data_root=releases.root)
    assert out == f"n\n{releases.r2.rows['tasks']}\n"


def test_nested_and_special_values(run_sql):
    out, _ = run_sql("select [1, 2] as l, {'a': null} as s, true as b, null as n, 0.5 as f, 'x,y' as t", fmt="csv")
    assert out == 'l,s,b,n,f,t\n"[1,2]","{""a"":null}",true,,0.5,"x,y"\n'
    out, _ = run_sql(
        "select [1, 2] as l, 'nan'::double as f, date '2026-12-01' as d, 1.5::decimal(4, 2) as m", fmt="json"
    )
    assert json.loads(out) == [{"l": [1, 2], "f": None, "d": "2026-12-01", "m": 1.5}]


def test_table_is_truncated_with_a_note_and_cells_are_not_markup(run_sql):
    out, err = run_sql("select i from range(5) t(i)", max_rows=2)
    assert "5 rows, first 2 shown" in err
    assert [line.strip("│ ") for line in out.splitlines()[3:5]] == ["0", "1"]
    out, _ = run_sql("select '[bold]x[/bold]' as s, null as n")
    assert "[bold]x[/bold]" in out and "null" in out


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"statement": "selec family from stg_tasks"}, 'SQL error: Parser Error: syntax error at or near "selec"'),
        ({"statement": "select nope from stg_tasks"}, 'SQL error: Binder Error: Referenced column "nope" not found'),
        ({"statement": "select 1", "release": "r9"}, "unknown release 'r9'"),
        ({"statement": "select 1", "fmt": "xml"}, "--format must be one of table, csv, json"),
        ({"statement": "select 1", "file": "sql/queries/coverage_gaps.sql"}, "either a SQL statement or --file"),
        ({}, "either a SQL statement or --file"),
        ({"file": "sql/queries/nope.sql"}, "nope.sql: no such file"),
        (
            {"statement": "select 1", "test": True},
            "--test runs the column tests of sql/*/schema.yml: give no SQL statement or --file",
        ),
        ({"test": True, "release": "r9"}, "unknown release 'r9'"),
    ],
)
def test_input_errors_are_one_line(run_sql, kwargs, message):
    with pytest.raises(CoworkEnvError) as info:
        run_sql(**kwargs)
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_column_tests_print_a_summary(run_sql):
    from coworkenv.data.sql_tests import load_tests

    out, err = run_sql(test=True)
    assert re.fullmatch(rf"{len(load_tests())} column tests passed \(\d+ views, release latest\)\n", out) and err == ""


def test_failing_column_tests_are_one_stderr_line_each_and_exit_1(run_sql, releases, duplicated_rl_root, capsys):
    with pytest.raises(typer.Exit) as info:
        run_sql(test=True, data_root=duplicated_rl_root)
    assert info.value.exit_code == 1
    captured = capsys.readouterr()
    (line,) = captured.err.splitlines()
    assert line.startswith("sql/staging/schema.yml: unique(stg_rl.task_id) failed on ")
    assert f"e.g. release_id='{releases.r2.release_id}', task_id=" in line
    assert captured.out.startswith("1 of ")


# --- the console script ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def procs(releases, duplicated_rl_root) -> dict[str, subprocess.CompletedProcess[str]]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "COWORKENV_DATA_ROOT": str(releases.root), "COLUMNS": "200"}
    calls = {
        "file": (
            [str(CLI), "sql", "--file", "sql/queries/lowest_valid_share_families.sql", "--release", "all"],
            env,
            ROOT,
        ),
        "bad_sql": ([str(CLI), "sql", "selec family from stg_tasks"], env, ROOT),
        "bad_release": ([str(CLI), "sql", "select 1", "--release", "r9", "--format", "csv"], env, ROOT),
        "column_tests": ([str(CLI), "sql", "--test", "--release", "all"], env, ROOT),
        "failing_column_tests": ([str(CLI), "sql", "--test", "--data-root", str(duplicated_rl_root)], env, ROOT),
        "bad_column_tests": ([str(CLI), "sql", "--test", "--file", "sql/queries/coverage_gaps.sql"], env, ROOT),
        # run from a folder without ./data and no COWORKENV_DATA_ROOT: the default root holds no release
        "default_root": (
            [str(CLI), "sql", "select 1"],
            {k: v for k, v in env.items() if k != "COWORKENV_DATA_ROOT"},
            releases.root / "releases",
        ),
    }

    def run(call):
        args, call_env, cwd = call
        return subprocess.run(args, capture_output=True, text=True, env=call_env, cwd=cwd, timeout=120, check=False)

    with ThreadPoolExecutor(max_workers=4) as pool:
        return dict(zip(calls, pool.map(run, calls.values()), strict=True))


def test_console_script_prints_a_table(procs, releases):
    proc = procs["file"]
    assert proc.returncode == 0, proc.stderr
    assert "first_pass_valid_share" in proc.stdout
    assert releases.r1.release_id in proc.stdout and releases.r2.release_id in proc.stdout
    assert proc.stderr.strip() == "10 rows"


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("bad_sql", 'error: SQL error: Parser Error: syntax error at or near "selec"'),
        ("bad_release", "error: unknown release 'r9'"),
        ("default_root", "error: no release under ./data:"),
        ("bad_column_tests", "error: --test runs the column tests"),
    ],
)
def test_console_script_errors_are_one_line_exit_2(procs, name, message):
    proc = procs[name]
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(message), proc.stderr


def test_console_script_runs_the_column_tests(procs):
    passed, failed = procs["column_tests"], procs["failing_column_tests"]
    assert passed.returncode == 0, passed.stderr
    assert re.fullmatch(r"\d+ column tests passed \(\d+ views, release all\)\n", passed.stdout) and passed.stderr == ""
    assert failed.returncode == 1, (failed.stdout, failed.stderr)
    (line,) = failed.stderr.splitlines()
    assert line.startswith("sql/staging/schema.yml: unique(stg_rl.task_id) failed on ")
    assert re.fullmatch(r"1 of \d+ column tests failed \(\d+ views, release latest\)\n", failed.stdout)
