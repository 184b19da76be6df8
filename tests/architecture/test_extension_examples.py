"""docs/architecture.md, "How to add …": the check kind and the tool it shows are each one module (or one function in
its service's module) and work as written. A copy of the package gets exactly the document's code and nothing else;
a task using both then parses, passes the grading-consistency gate and the whole validation battery."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import textwrap

import pytest

from tests.support import ROOT

DOC = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")


def _example(section: str) -> str:
    match = re.search(rf"### {section}\n.*?```python\n(.*?)```", DOC, re.S)
    assert match, f"docs/architecture.md has no python example under '### {section}'"
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
    print("ok")
""")


@pytest.mark.slow
def test_the_documented_check_kind_and_tool_work_as_written(tmp_path):
    package = tmp_path / "coworkenv"
    shutil.copytree(ROOT / "coworkenv", package, ignore=shutil.ignore_patterns("__pycache__"))
    (package / "checks" / "kinds" / "chat_posted.py").write_text(_example("a check kind"), encoding="utf-8")
    mail = package / "workspace" / "services" / "mail.py"
    mail.write_text(mail.read_text(encoding="utf-8") + "\n\n" + _example("a tool"), encoding="utf-8")
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
    assert not (ROOT / "coworkenv" / "checks" / "kinds" / "chat_posted.py").exists()  # the repo itself is untouched
