"""`import_claw_eval` on task folders that are wrong or hostile: a wrongly-typed task.yaml field, or a fixture, grader
or task.yaml that links out of its task folder, makes that task one that did not map, with the reason in the report;
the other tasks still import, nothing raises, and nothing outside a task's folder is read."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from coworkenv.importers.claw_eval import import_claw_eval
from tests.importers.conftest import reports
from tests.importers.test_import_cli import cli

SECRET = "TOP-SECRET-7f3a"
MEMBER = ("scoring_components", 1, "check", "checks", 0, "check")
"""A group member's wrapped check."""


def edit_yaml(folder: Path, where: tuple, value: object) -> None:
    path = folder / "task.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    node = data
    for key in where[:-1]:
        node = node[key]
    node[where[-1]] = value
    path.write_text(yaml.safe_dump(data), encoding="utf-8")


def outside_file(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / "elsewhere" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("task", "where", "value", "reason"),
    [
        (
            "E01_mail_triage",
            ("scoring_components", 0, "weight"),
            "heavy",
            "scoring_components.0.weight: Input should be a valid number",
        ),
        ("E01_mail_triage", ("user_agent",), "enabled", "user_agent: Input should be a valid dictionary"),
        ("E01_mail_triage", ("user_agent",), ["enabled"], "user_agent: Input should be a valid dictionary"),
        ("E01_mail_triage", ("tools",), 7, "tools: Input should be a valid list"),
        ("E01_mail_triage", ("scoring_components",), 7, "scoring_components: Input should be a valid list"),
        ("E01_mail_triage", ("safety_checks",), 7, "safety_checks: Input should be a valid list"),
        (
            "E04_reply_drafts",
            ("scoring_components", 2, "requires"),
            7,
            "scoring_components.2.requires: Input should be a valid list",
        ),
        (
            "E04_reply_drafts",
            ("scoring_components", 1, "check", "body_contains"),
            7,
            "body_contains: should be a text or a list of texts",
        ),
        (
            "E04_reply_drafts",
            ("scoring_components", 1, "check", "count"),
            "two",
            "scoring_components.1.check.count: Input should be a valid integer",
        ),
        ("E05_expense_audit", MEMBER, "total", "checks.0.check: Input should be a valid dictionary"),
        ("E05_expense_audit", MEMBER, None, "checks.0.check: Input should be a valid dictionary"),
        (
            "E02_crm_inventory_update",
            ("scoring_components", 1, "check", "match"),
            "CUS-002",
            "check.match: Input should be a valid dictionary",
        ),
        (
            "E02_crm_inventory_update",
            ("scoring_components", 1, "check", "match", "id"),
            ["CUS-002"],
            "match.id: should be a single value",
        ),
        (
            "E02_crm_inventory_update",
            ("scoring_components", 2, "check", "fields"),
            "quantity",
            "check.fields: Input should be a valid dictionary",
        ),
    ],
)
def test_a_wrongly_typed_field_is_a_task_that_did_not_map(task_copy, task, where, value, reason):
    folder = task_copy(task)
    task_copy("E03_web_research_injection")  # the rest of the folder still imports
    edit_yaml(folder, where, value)
    result = import_claw_eval(folder.parent)
    by = reports(result)
    assert not by[task].imported and by[task].why_not.startswith("task.yaml: ") and reason in by[task].why_not
    assert by["E03_web_research_injection"].imported
    assert [s.meta.claw_eval_id for s in result.specs] == ["E03_web_research_injection"]


@pytest.mark.parametrize("value", [5, [7], {"a": 1}])
def test_a_wrongly_typed_fixture_value_is_a_task_that_did_not_map(task_copy, value):
    folder = task_copy("E01_mail_triage")
    inbox = folder / "fixtures" / "gmail" / "inbox.json"
    messages = json.loads(inbox.read_text(encoding="utf-8"))
    messages[0]["to"] = value
    inbox.write_text(json.dumps(messages), encoding="utf-8")
    (report,) = import_claw_eval(folder.parent).report.tasks
    assert not report.imported and "workspace.mail.messages.0.to" in report.why_not


@pytest.mark.parametrize("name", ["finance/secret.json", "docs/passwd.txt"])
def test_a_fixture_linked_out_of_its_task_folder_is_not_read(task_copy, tmp_path, name):
    folder = task_copy("E02_crm_inventory_update")
    secret = outside_file(tmp_path, "secret.json", json.dumps([{"id": "S-1", "note": SECRET}]))
    link = folder / "fixtures" / name
    link.parent.mkdir()
    link.symlink_to(secret if name.endswith(".json") else Path("/etc/passwd"))
    inside = task_copy("E04_reply_drafts")  # a link that stays in its task folder is fine
    (inside / "fixtures" / "gmail" / "inbox.json").rename(inside / "inbox.json")
    (inside / "fixtures" / "gmail" / "inbox.json").symlink_to(Path("..", "..", "inbox.json"))
    result = import_claw_eval(folder.parent)
    by = reports(result)
    assert not by["E02_crm_inventory_update"].imported
    assert by["E02_crm_inventory_update"].why_not == f"fixtures/{name} points outside the task folder"
    assert by["E04_reply_drafts"].imported
    written = "".join(s.to_json() for s in result.specs) + result.report.model_dump_json()
    assert SECRET not in written and "root:" not in written


def test_a_fixtures_folder_linked_out_is_not_walked(task_copy, tmp_path):
    folder = task_copy("E02_crm_inventory_update")
    elsewhere = tmp_path / "elsewhere" / "fixtures"
    elsewhere.parent.mkdir()
    shutil.move(folder / "fixtures", elsewhere)
    (folder / "fixtures").symlink_to(elsewhere, target_is_directory=True)
    report = import_claw_eval(folder.parent).report.tasks[0]
    assert not report.imported and report.why_not == "fixtures points outside the task folder"


def test_a_grader_or_task_yaml_linked_out_is_not_read(task_copy, tmp_path):
    graded = task_copy("E01_mail_triage")
    grader = outside_file(tmp_path, "grader.py", (graded / "grader.py").read_text(encoding="utf-8"))
    (graded / "grader.py").unlink()
    (graded / "grader.py").symlink_to(grader)
    linked = task_copy("E04_reply_drafts")
    task_yaml = outside_file(tmp_path, "task.yaml", (linked / "task.yaml").read_text(encoding="utf-8"))
    (linked / "task.yaml").unlink()
    (linked / "task.yaml").symlink_to(task_yaml)
    by = reports(import_claw_eval(graded.parent))
    assert (
        not by["E01_mail_triage"].imported
        and by["E01_mail_triage"].why_not == "grader.py points outside the task folder"
    )
    # its task.yaml unread, the task is named by its folder
    assert (
        not by["E04_reply_drafts"].imported
        and by["E04_reply_drafts"].why_not == "task.yaml points outside the task folder"
    )


def test_the_cli_reports_both_and_writes_the_rest(task_copy, tmp_path):
    mistyped = task_copy("E01_mail_triage")
    edit_yaml(mistyped, ("scoring_components", 0, "weight"), "heavy")
    linked = task_copy("E02_crm_inventory_update")
    (linked / "fixtures" / "finance").mkdir()
    (linked / "fixtures" / "finance" / "secret.json").symlink_to(
        outside_file(tmp_path, "secret.json", json.dumps([{"id": SECRET}]))
    )
    task_copy("E04_reply_drafts")
    out, report = tmp_path / "tasks.jsonl", tmp_path / "report.json"
    result = cli("import", "claw-eval", mistyped.parent, "--out", out, "--report", report)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    assert [json.loads(line)["meta"]["claw_eval_id"] for line in out.read_text(encoding="utf-8").splitlines()] == [
        "E04_reply_drafts"
    ]
    by = {t["task_id"]: t for t in json.loads(report.read_text(encoding="utf-8"))["tasks"]}
    assert "scoring_components.0.weight" in by["E01_mail_triage"]["why_not"]
    assert by["E02_crm_inventory_update"]["why_not"] == "fixtures/finance/secret.json points outside the task folder"
    assert SECRET not in out.read_text(encoding="utf-8") + report.read_text(encoding="utf-8")
