"""Helpers shared by the tests (fixtures live in the conftest.py of each level)."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
"""The repository."""
EXAMPLES = ROOT / "examples" / "tasks"
FIXTURES = ROOT / "tests" / "fixtures"
