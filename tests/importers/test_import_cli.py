"""`coworkenv import claw-eval` through the real console script: tasks as JSON Lines, the report, stdout by default,
and bad input → exit code 2 with one line on stderr."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from coworkenv.spec.io import load_tasks
from tests.importers.conftest import CLAW_EVAL
from tests.support import ROOT

CLI = Path(sys.executable).parent / "coworkenv"
ENV = {k: v for k, v in os.environ.items() if not k.startswith("COWORKENV_JUDGE")} | {
    "HF_HUB_OFFLINE": "1",
    "COLUMNS": "200",
}


def cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(CLI), *map(str, args)], capture_output=True, text=True, env=ENV, cwd=ROOT, timeout=300, check=False
    )


def test_import_writes_tasks_and_the_report(tmp_path):
    out, report = tmp_path / "tasks.jsonl", tmp_path / "report.json"
    result = cli("import", "claw-eval", CLAW_EVAL, "--out", out, "--report", report)
    assert result.returncode == 0, result.stderr
    specs = load_tasks(out)
    assert sorted(s.meta.claw_eval_id for s in specs) == [
        f"E0{i}_{n}"
        for i, n in enumerate(
            [
                "mail_triage",
                "crm_inventory_update",
                "web_research_injection",
                "reply_drafts",
                "expense_audit",
                "policy_summary_tone",
            ],
            1,
        )
    ]
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["summary"]["criteria"] == {"total": 28, "exact": 24, "approximate": 1, "rubric": 1, "unexpressible": 2}
    by = {t["task_id"]: t for t in data["tasks"]}
    assert by["E06_policy_summary_tone"]["gate"] == "not graded" and by["E01_mail_triage"]["gate"] == "pass"
    assert "24 of 28 criteria exact (86%), 1 approximate, 1 as rubric, 2 not expressible" in " ".join(
        result.stderr.split()
    )
    assert result.stdout == ""


def test_without_out_the_tasks_go_to_stdout():
    result = cli("import", "claw-eval", CLAW_EVAL / "tasks" / "E04_reply_drafts")
    assert result.returncode == 0, result.stderr
    [line] = result.stdout.splitlines()
    assert json.loads(line)["id"] == "claw-eval-e04-reply-drafts"


def test_bad_input_exits_2_with_one_line(tmp_path):
    missing = cli("import", "claw-eval", tmp_path / "nope")
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1 and "no such directory" in missing.stderr
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "task.yaml").write_text("task_id: [a\nprompt: b: c\n", encoding="utf-8")
    bad = cli("import", "claw-eval", tmp_path, "--out", tmp_path / "x.jsonl")
    assert (
        bad.returncode == 2
        and bad.stderr.startswith("error: ")
        and bad.stderr.count("\n") == 1
        and "not valid YAML" in bad.stderr
    )
    assert not (tmp_path / "x.jsonl").exists()
