"""The sandbox is a layer of its own: it imports nothing of the library above it, and the boot program, which runs
before any limit but its own is in place, imports nothing but the standard library."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "coworkenv" / "sandbox"
MODULES = sorted(PACKAGE.glob("*.py"))
ALLOWED = ("coworkenv.errors", "coworkenv.registry", "coworkenv.sandbox", "pydantic")


def imported(path: Path) -> list[tuple[int, str]]:
    """Every module `path` imports, at the top or inside a function (relative imports as written)."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            out.append((node.lineno, "." * node.level + (node.module or "")))
    return out


def is_stdlib(name: str) -> bool:
    return name.split(".")[0] in sys.stdlib_module_names or name == "__future__"


def test_there_are_modules():
    assert {p.stem for p in MODULES} >= {"boot", "runtimes", "worker", "pool", "jobs"}


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_the_sandbox_imports_nothing_above_it(path: Path):
    for line, name in imported(path):
        assert not name.startswith("."), f"{path.name}:{line}: relative import {name}"
        assert is_stdlib(name) or any(name == a or name.startswith(a + ".") for a in ALLOWED), (
            f"{path.name}:{line} imports {name}"
        )


def test_the_boot_program_imports_the_standard_library_only():
    for line, name in imported(PACKAGE / "boot.py"):
        assert is_stdlib(name), f"boot.py:{line} imports {name}"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_modules_stay_small(path: Path):
    assert len(path.read_text(encoding="utf-8").splitlines()) <= 500, f"{path.name}: split it by concern"
