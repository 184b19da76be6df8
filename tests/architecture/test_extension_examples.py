"""docs/architecture.md, "How to add …", with its code in docs/design/extending.md: the check kind, the tool and the
family shown are each one module (or one function in its service's module) and work as written. A copy of the package
gets exactly the page's code, in exactly the files the recipes name, and nothing else; a task using the kind and the
tool then parses, passes the grading-consistency gate and the whole validation battery, and the family's tasks do at
every difficulty."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import textwrap

import pytest

from tests.support import ROOT

PAGE = ROOT / "docs" / "design" / "extending.md"
RECIPES = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")


def _example(section: str) -> str:
    match = re.search(rf"## {section}\n.*?```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)
    assert match, f"docs/design/extending.md has no python example under '## {section}'"
    return match.group(1)


def _target(section: str) -> str:
    """The file the worked example goes into, as its page names it (checked against the recipe's pattern)."""
    match = re.search(rf"## {section}\n\n(?:Appended to )?`(coworkenv/[^`]+)`", PAGE.read_text(encoding="utf-8"))
    assert match, f"docs/design/extending.md does not name the file of '## {section}'"
    return match.group(1)


CHECK = textwrap.dedent("""
    import json
    from coworkenv.checks import CHECK_KINDS
    from coworkenv.grading import consistency_gate
    from coworkenv.spec import TaskSpec
    from coworkenv.validate.battery import validate_spec
    from coworkenv.workspace import TOOLS

    assert "chat_posted" in CHECK_KINDS and TOOLS.get("mail_archive").kind == "write"
    spec = json.loads(open("examples/tasks/07_chat_standup_blockers.json").read())
    spec["tools"].append("mail_archive")
    spec["workspace"]["mail"] = {"messages": [{"id": "m1", "from": "a@acme.test", "subject": "FYI", "date": "2026-12-01T08:00:00Z"}]}
    channel = next(s["args"]["channel"] for s in spec["solution"] if s.get("tool") == "chat_post")
    text = next(s["args"]["text"] for s in spec["solution"] if s.get("tool") == "chat_post")
    spec["solution"].insert(-1, {"tool": "mail_archive", "args": {"id": "m1"}})
    spec["checks"] += [
        {"id": "posted", "kind": "chat_posted", "channel": channel, "text": text.split()[0]},
        {"id": "archived-m1", "kind": "mail_in_folder", "ids": ["m1"], "folder": "archive"},
    ]
    task = TaskSpec.model_validate(spec)
    gate = consistency_gate(task)
    assert gate.passed, gate.failures
    verdict = validate_spec(task)
    assert verdict.valid, [(r.code, r.message) for r in verdict.failures]
    broken = dict(spec, checks=spec["checks"] + [{"id": "nowhere", "kind": "chat_posted", "channel": "no-such", "text": "x"}])
    assert "references" in validate_spec(broken).failed_codes
    from coworkenv.synth.family import load_families
    from coworkenv.synth.generate import build_task

    family = load_families().get("note_from_file")
    for difficulty in (1, 2, 3, 4):
        for seed in range(2):
            task = build_task(family, seed, difficulty)
            verdict = validate_spec(task)
            assert verdict.valid, (task.id, [(r.code, r.message) for r in verdict.failures])
    print("ok")
""")


@pytest.mark.slow
def test_the_documented_check_kind_tool_and_family_work_as_written(tmp_path):
    assert _target("a check kind") == "coworkenv/checks/kinds/chat_posted.py"
    assert "`coworkenv/checks/kinds/<kind>.py`" in RECIPES
    assert _target("a tool") == "coworkenv/workspace/services/mail.py"
    assert "`coworkenv/workspace/services/<service>.py`" in RECIPES
    assert _target("a family") == "coworkenv/synth/families/note_from_file.py"
    assert "`coworkenv/synth/families/<family>.py`" in RECIPES
    shutil.copytree(ROOT / "coworkenv", tmp_path / "coworkenv", ignore=shutil.ignore_patterns("__pycache__"))
    before = {p.relative_to(tmp_path): p.read_bytes() for p in (tmp_path / "coworkenv").rglob("*.py")}
    (tmp_path / _target("a check kind")).write_text(_example("a check kind"), encoding="utf-8")
    mail = tmp_path / _target("a tool")
    mail.write_text(mail.read_text(encoding="utf-8") + "\n\n" + _example("a tool"), encoding="utf-8")
    (tmp_path / _target("a family")).write_text(_example("a family"), encoding="utf-8")
    after = {p.relative_to(tmp_path): p.read_bytes() for p in (tmp_path / "coworkenv").rglob("*.py")}
    touched = {str(path) for path in after if before.get(path) != after[path]}
    assert touched == {_target("a check kind"), _target("a tool"), _target("a family")}
    proc = subprocess.run(
        [sys.executable, "-P", "-c", CHECK],
        cwd=ROOT,
        env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stdout + proc.stderr
    for section in ("a check kind", "a family"):  # the repo itself is untouched
        assert not (ROOT / _target(section)).exists()


STAGE = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    from coworkenv.cli.app import main
    from coworkenv.pipeline.synthesis import SYNTHESIS

    root = Path(sys.argv[1])
    assert SYNTHESIS.names()[-4:] == ("build", "tally", "gate", "publish") and "tally.json" in SYNTHESIS.outputs_after("plan")
    args = ["--run-id", "t", "--data-root", str(root)]
    try:
        main(["synthesize", "--n", "6", "--seed", "3", "--runtime", "none", *args])
    except SystemExit as exc:
        assert exc.code == 0, exc.code
    tally = json.loads((root / "runs" / "t" / "tally.json").read_text())
    assert sum(tally.values()) == 6, tally
    (root / "runs" / "t" / "tally.json").unlink()
    try:
        main(["tally", *args])
    except SystemExit as exc:
        assert exc.code == 0, exc.code
    assert json.loads((root / "runs" / "t" / "tally.json").read_text()) == tally
    print("ok")
""")


def _insert_before(text: str, anchor: str, lines: str) -> str:
    assert text.count(anchor) == 1, anchor
    return text.replace(anchor, lines + anchor)


@pytest.mark.slow
def test_the_documented_stage_runs_in_the_job_and_as_its_command(tmp_path):
    """The stage's module and its line in `SYNTHESIS`, and nothing else: the whole synthesis runs it (its output in the
    run) and `coworkenv tally` runs it alone; the DAG's task follows from the same declaration (tests/dags)."""
    assert _target("a stage") == "coworkenv/pipeline/synthesis/tally.py"
    assert (
        "One module in its job's folder (`coworkenv/pipeline/synthesis/`" in RECIPES
        and "the folder's `__init__.py`" in RECIPES
    )
    declaration = re.search(r"## a stage\n.*?```python\n.*?```.*?```python\n(.*?)```", PAGE.read_text(), re.S)
    assert declaration, "docs/design/extending.md shows no line for the job's declaration"
    import_line, stage_line = declaration.group(1).splitlines()
    package = tmp_path / "pkg"
    shutil.copytree(ROOT / "coworkenv", package / "coworkenv", ignore=shutil.ignore_patterns("__pycache__"))
    before = {p.relative_to(package): p.read_bytes() for p in (package / "coworkenv").rglob("*.py")}
    (package / _target("a stage")).write_text(_example("a stage"), encoding="utf-8")
    job = package / "coworkenv" / "pipeline" / "synthesis" / "__init__.py"
    text = _insert_before(job.read_text(encoding="utf-8"), "from coworkenv.pipeline.job import ", import_line + "\n")
    job.write_text(
        _insert_before(text, '        gate_stage(\n            "gate",', stage_line + "\n"), encoding="utf-8"
    )
    after = {p.relative_to(package): p.read_bytes() for p in (package / "coworkenv").rglob("*.py")}
    touched = {str(path) for path in after if before.get(path) != after[path]}
    assert touched == {_target("a stage"), "coworkenv/pipeline/synthesis/__init__.py"}
    proc = subprocess.run(
        [sys.executable, "-P", "-c", STAGE, str(tmp_path / "data")],
        cwd=ROOT,
        env={"PYTHONPATH": str(package), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0 and proc.stdout.strip().endswith("ok"), proc.stdout[-2000:] + proc.stderr[-3000:]
    assert not (ROOT / _target("a stage")).exists()
