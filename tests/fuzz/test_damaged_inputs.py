"""The second hardening round's findings, each as the user met it, in process through `coworkenv.cli.main`: damaged
Parquet behind a gate, the SQL catalog and the integrity check, a memory limit too small to load a release, hostile
Claw-Eval tasks, and commands that fail after their output folder was made. Exit 0, 1 (a gate that fails) or 2 with
one `error:` line, no traceback, and nothing left behind."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.support import ROOT
from tests.support.fuzz import check, run_main

CLAW = ROOT / "examples" / "claw-eval" / "tasks"
TASK = ROOT / "examples" / "tasks" / "01_mail_forward_invoices.json"


def _release_part(root: Path, table: str) -> Path:
    return sorted((root / "releases").glob(f"r-*/{table}/**/*.parquet"))[0]


def _bad_utf8_in_a_page(path: Path) -> None:
    """Rewrite the Parquet file uncompressed and put a byte that is not UTF-8 into one of its string values: the
    file's footer and sizes stay valid; only decoding the value can tell."""
    table = pq.read_table(path)
    pq.write_table(table, path, compression="none")
    data = bytearray(path.read_bytes())
    at = data.index(b'"family"')
    data[at + 1] = 0xFF
    path.write_bytes(bytes(data))


def _bad_utf8_in_the_footer(path: Path) -> None:
    """A column name in the footer's schema made invalid UTF-8 (the thrift reader decodes it)."""
    data = bytearray(path.read_bytes())
    at = data.rindex(b"spec_json")
    data[at] = 0xFF
    path.write_bytes(bytes(data))


def test_a_gate_on_a_staged_table_with_a_damaged_string_page_is_one_line(data_root):
    _bad_utf8_in_a_page(data_root / "runs" / "fz" / "tables" / "tasks.parquet")
    outcome = run_main(["gate", "--run-id", "fz", "--data-root", str(data_root)])
    check(outcome)
    assert outcome.code == 2 and "tasks.parquet" in outcome.stderr and "cannot read" in outcome.stderr


@pytest.mark.parametrize("command", [["sql", "select count(*) from src_tasks"], ["releases"]])
def test_a_release_footer_that_is_not_utf8_is_a_damaged_release(data_root, command):
    _bad_utf8_in_the_footer(_release_part(data_root, "tasks"))
    outcome = run_main([*command, "--data-root", str(data_root)])
    check(outcome)
    if command[0] == "sql":
        assert outcome.code == 2 and "damaged release" in outcome.stderr


@pytest.mark.parametrize("limit", ["1KB", "300KB"])
def test_a_memory_limit_too_small_for_the_release_is_one_line(data_root, limit):
    outcome = run_main(
        ["sql", "select count(*) from src_tasks", "--memory-limit", limit, "--data-root", str(data_root)]
    )
    check(outcome)
    assert outcome.code == 2 and "Out of Memory" in outcome.stderr and "raise --memory-limit" in outcome.stderr


def test_select_from_a_bare_table_name_points_at_the_views(data_root):
    outcome = run_main(["sql", "select * from tasks", "--data-root", str(data_root)])
    check(outcome)
    assert "use src_tasks (as stored) or stg_tasks" in outcome.stderr and "coworkenv_internal" not in outcome.stderr


def _claw_copy(tmp_path: Path, task: str, edit) -> Path:  # noqa: ANN001 — a text → text function
    folder = tmp_path / "claw" / task
    shutil.copytree(CLAW / task, folder)
    path = folder / "task.yaml"
    path.write_text(edit(path.read_text(encoding="utf-8")), encoding="utf-8")
    return folder


def test_a_claw_eval_prompt_nested_20000_deep_is_one_line(tmp_path):
    nested = "[" * 20_000 + "]" * 20_000
    folder = _claw_copy(
        tmp_path, "E01_mail_triage", lambda text: text.replace("prompt:\n", f"nest: {nested}\nprompt:\n", 1)
    )
    out = tmp_path / "new" / "tasks.jsonl"
    outcome = run_main(["import", "claw-eval", str(folder), "--out", str(out)])
    check(outcome, {tmp_path / "new": None})
    assert outcome.code == 2 and "nested deeper than" in outcome.stderr


def test_a_claw_eval_min_calls_beyond_any_trajectory_is_reported_not_built(tmp_path):
    folder = _claw_copy(
        tmp_path, "E04_reply_drafts", lambda text: re.sub(r"min_calls: \d+", "min_calls: 99999999999999999999999", text)
    )
    out = tmp_path / "tasks.jsonl"
    report = tmp_path / "report.json"
    outcome = run_main(["import", "claw-eval", str(folder), "--out", str(out), "--report", str(report)], timeout=60)
    check(outcome)
    assert "min_calls" in report.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "args",
    [
        ["run", "--task", str(TASK), "--agent", "no-such-agent", "--out", "{new}/a/trajectory.json"],
        ["run", "--task", str(CLAW / "E01_mail_triage" / "task.yaml"), "--out", "{new}/trajectory.json"],
        ["import", "claw-eval", "{bad_claw}", "--out", "{new}/tasks.jsonl", "--report", "{new2}/report.json"],
        ["eval", "--agent", "null", "--suite", "no-such-suite", "--data-root", "{new}/data"],
        ["nightly", "--suite", "no-such-suite", "--run-id", "q", "--data-root", "{new}/data"],
        ["rollout", "--run-id", "no-such-run", "--data-root", "{new}/data"],
    ],
    ids=[
        "run, unknown agent",
        "run, task not JSON",
        "import, bad task",
        "eval, mistyped suite",
        "nightly, mistyped suite",
        "rollout, no such run",
    ],
)
def test_a_failed_command_leaves_no_empty_folder(tmp_path, args):
    bad = _claw_copy(tmp_path, "E01_mail_triage", lambda text: "[" * 100 + "]" * 100 + "\n")
    given = [a.format(new=tmp_path / "new", new2=tmp_path / "new2", bad_claw=bad.parent) for a in args]
    outcome = run_main(given)
    check(outcome, {tmp_path / "new": None, tmp_path / "new2": None})
    assert outcome.code == 2
