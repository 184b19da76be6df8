"""`coworkenv sql` and `coworkenv export` through the console script on damaged releases and hostile SQL.

Every case is one line on stderr and exit code 2, with nothing on stdout and nothing written: a missing, damaged
or unlisted part; a broken `LATEST` or data root; a statement past the timeout, the memory limit or the result
caps; statements that would write a file or lift a limit; a non-UTF-8 `--file`. The processes run side by side.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.support import ROOT

CLI = Path(sys.executable).parent / "coworkenv"
NEVER_ENDS = "select count(*) from range(1000000000) a, range(1000000000) b"


def _first_part(release: Path, table: str, index: int = 0) -> Path:
    return release / json.loads((release / "manifest.json").read_text())["files"][table][index]["path"]


@pytest.fixture(scope="module")
def damaged(releases, tmp_path_factory) -> dict[str, Path]:
    """Data roots, each holding a copy of r2 damaged one way (or a broken LATEST / root)."""
    roots: dict[str, Path] = {}

    def copy(name: str) -> Path:
        roots[name] = tmp_path_factory.mktemp(name)
        return releases.copy(releases.r2, roots[name])

    _first_part(copy("missing"), "trajectories", 1).unlink()
    victim = _first_part(copy("truncated"), "tasks")
    victim.write_bytes(victim.read_bytes()[:100])
    extra = _first_part(copy("extra"), "rl")
    extra.with_name("part-99.parquet").write_bytes(extra.read_bytes())
    (copy("latest_bytes").parent / "LATEST").write_bytes(b"\xff\xfe\x80\n")
    latest = copy("latest_dir").parent / "LATEST"
    latest.unlink()
    latest.mkdir()
    roots["root_file"] = tmp_path_factory.mktemp("root-file") / "not-a-folder"
    roots["root_file"].write_text("x")
    roots["intact"] = tmp_path_factory.mktemp("intact")
    releases.copy(releases.r2, roots["intact"])
    return roots


@pytest.fixture(scope="module")
def procs(releases, damaged, tmp_path_factory) -> dict[str, subprocess.CompletedProcess[str]]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "COWORKENV_DATA_ROOT": str(releases.root), "COLUMNS": "200"}
    out = tmp_path_factory.mktemp("exports")
    bad_file = out / "latin1.sql"
    bad_file.write_bytes("select 'caf\xe9'".encode("latin-1"))
    target = _first_part(damaged["intact"] / "releases" / releases.r2.release_id, "rl")
    intact = ["--data-root", str(damaged["intact"])]

    def sql(*args: str) -> list[str]:
        return [str(CLI), "sql", *args]

    def export(fmt: str, name: str) -> list[str]:
        return [
            str(CLI),
            "export",
            "--release",
            "latest",
            "--format",
            fmt,
            "--out",
            str(out / name),
            "--data-root",
            str(damaged[name]),
        ]

    calls = {
        **{
            f"sql_{name}": sql("select count(*) from src_trajectories", "--data-root", str(damaged[name]))
            for name in damaged
            if name != "intact"
        },
        "export_missing": export("jsonl", "missing"),
        "export_truncated": export("hf", "truncated"),
        "timeout": sql(NEVER_ENDS, "--timeout", "1"),
        "huge_string": sql("select repeat('x', 2000000000) as s", "--timeout", "1"),
        "memory": sql("select list(range) as l from range(200000000)", "--memory-limit", "64MB"),
        "rows": sql("select * from range(1000)", "--max-result-rows", "999", "--format", "csv"),
        "bytes": sql("select repeat('x', 100000) as s from range(100)", "--max-result-mb", "1", "--format", "csv"),
        "under_caps": sql("select * from range(999)", "--max-result-rows", "999", "--format", "csv"),
        "copy": sql(f"copy (select 1 as a) to '{target}' (use_tmp_file false)", *intact),
        "explain_copy": sql(f"explain analyze copy (select 1 as a) to '{target}' (use_tmp_file false)", *intact),
        "prepare_copy": sql(
            f"prepare q as copy (select 1 as a) to '{target}' (use_tmp_file false); execute q", *intact
        ),
        "outside_file": sql("select * from read_csv('/etc/passwd')"),
        "lift_limit": sql("set memory_limit = '1TB'; select 1"),
        "latin1_file": sql("--file", str(bad_file)),
        "bad_memory_limit": sql("select 1", "--memory-limit", "lots"),
        "bad_timeout": sql("select 1", "--timeout", "0"),
        "verify": sql("select count(*) as n from src_tasks", "--verify", "--format", "csv", *intact),
    }
    before = hashlib.sha256(target.read_bytes()).hexdigest()

    def run(args: list[str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(args, capture_output=True, text=True, env=env, cwd=ROOT, timeout=120, check=False)

    with ThreadPoolExecutor(max_workers=4) as pool:
        done = dict(zip(calls, pool.map(run, calls.values()), strict=True))
    done["target_unchanged"] = hashlib.sha256(target.read_bytes()).hexdigest() == before  # type: ignore[assignment]
    done["exports_left"] = sorted(p.name for p in out.iterdir())  # type: ignore[assignment]
    return done


@pytest.mark.parametrize(
    ("name", "message"),
    [
        (
            "sql_missing",
            r"error: damaged release r-r2-\w+: .*/trajectories/family=\w+/part-\d\.parquet: missing; refusing to read it",
        ),
        (
            "sql_truncated",
            r"error: damaged release r-r2-\w+: .*/tasks/.*part-0\.parquet: 100 bytes, the manifest lists \d+",
        ),
        ("sql_extra", r"error: damaged release r-r2-\w+: .*/rl/part-99\.parquet: not listed in manifest\.json"),
        ("sql_latest_bytes", r"error: .*/releases/LATEST: not UTF-8 text"),
        ("sql_latest_dir", r"error: .*/releases/LATEST: cannot read \(Is a directory\)"),
        ("sql_root_file", r"error: data root '.*not-a-folder': .*not-a-folder is not a directory"),
        ("export_missing", r"error: damaged release r-r2-\w+: .*/trajectories/.*: missing"),
        ("export_truncated", r"error: damaged release r-r2-\w+: .*/tasks/.*: 100 bytes"),
        ("timeout", r"error: SQL statement ran past the 1 s timeout \(--timeout\) and was stopped"),
        ("huge_string", r"error: SQL statement ran past the 1 s timeout"),
        ("memory", r"error: SQL statement needs more than the memory limit 64MB \(--memory-limit\)"),
        ("rows", r"error: SQL result has more than 999 rows \(--max-result-rows\)"),
        ("bytes", r"error: SQL result is larger than 1 MiB \(--max-result-mb\)"),
        ("copy", r"error: SQL: COPY statements that write files are refused"),
        ("explain_copy", r"error: SQL: EXPLAIN statements that write files are refused"),
        ("prepare_copy", r"error: SQL: PREPARE statements that write files are refused"),
        ("outside_file", r"error: SQL error: Permission Error: Cannot access file \"/etc/passwd\""),
        ("lift_limit", r"error: SQL error: Invalid Input Error: Cannot change configuration option \"memory_limit\""),
        ("latin1_file", r"error: .*latin1\.sql: not UTF-8 text"),
        ("bad_memory_limit", r"error: --memory-limit: memory limit must be a size such as 4GB"),
        ("bad_timeout", r"error: --timeout: Input should be greater than 0"),
    ],
)
def test_refused_with_one_line_and_exit_2(procs, name, message):
    proc = procs[name]
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and re.match(message, lines[0]), proc.stderr


def test_nothing_is_written_by_a_refused_statement_or_export(procs):
    assert procs["target_unchanged"] is True
    assert procs["exports_left"] == ["latin1.sql"]  # no export folder, no temporary beside it


def test_results_within_the_caps_and_a_full_check_of_an_intact_release_pass(procs, releases):
    under = procs["under_caps"]
    assert under.returncode == 0, under.stderr
    assert under.stdout.splitlines() == ["range", *map(str, range(999))]
    verified = procs["verify"]
    assert verified.returncode == 0, verified.stderr
    assert verified.stdout == f"n\n{releases.r2.rows['tasks']}\n"
