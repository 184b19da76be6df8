"""Helpers shared by the tests (fixtures live in the conftest.py of each level)."""

import importlib.util
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
"""The repository."""
EXAMPLES = ROOT / "examples" / "tasks"
FIXTURES = ROOT / "tests" / "fixtures"


def bench_script(name: str) -> ModuleType:
    """A script of bench/ (not a package) imported as a module, for its functions."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
