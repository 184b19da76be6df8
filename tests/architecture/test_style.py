"""The code's style is checked where CI runs, not only by `make lint`: `ruff check` and `ruff format --check` (line
length 120, pyproject.toml) pass on every tree of Python the project ships, and no `fmt: skip` or `fmt: off` exempts a
line from the formatter."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TREES = ("coworkenv", "dags", "tests", "bench", "plugins")
RUFF = Path(sys.executable).with_name("ruff")
EXEMPTION = re.compile(r"#\s*fmt:\s*(skip|off)\b")

pytestmark = pytest.mark.skipif(not RUFF.exists(), reason="ruff is installed with the project's venv (make setup)")


def ruff(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(RUFF), *args, *TREES], cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_ruff_check_passes():
    done = ruff("check", "--no-cache")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-1000:]


def test_ruff_format_leaves_every_file_unchanged():
    done = ruff("format", "--check", "--no-cache")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-1000:]


def test_no_line_is_exempt_from_the_formatter():
    exempt = [
        f"{path.relative_to(ROOT)}:{n}"
        for tree in TREES
        for path in sorted((ROOT / tree).rglob("*.py"))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if EXEMPTION.search(line)
    ]
    assert not exempt, f"formatter exemptions: {exempt[:20]}"
