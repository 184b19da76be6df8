"""A file name names one thing: library modules share a name only where docs/architecture.md, "Parallel modules",
lists them as playing the same role in parallel packages."""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LIBRARY = ROOT / "coworkenv"
DOC = ROOT / "docs" / "architecture.md"


def shared_names(library: Path = LIBRARY) -> dict[str, set[str]]:
    """File name → the folders (relative to the library, with a trailing slash) of every module that has it."""
    folders: dict[str, set[str]] = defaultdict(set)
    for path in library.rglob("*.py"):
        if path.name != "__init__.py":
            folders[path.name].add(f"{path.parent.relative_to(library).as_posix()}/")
    return {name: where for name, where in folders.items() if len(where) > 1}


def documented() -> dict[str, set[str]]:
    """The table of the "Parallel modules" section: file name → folders, one row possibly naming several files."""
    text = DOC.read_text(encoding="utf-8")
    section = text.split("\n### Parallel modules\n", 1)[1].split("\n## ", 1)[0]
    table: dict[str, set[str]] = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not cells[0].startswith("`"):
            continue
        for name in re.findall(r"`([^`]+)`", cells[0]):
            assert name not in table, f"{name} has two rows"
            table[name] = set(re.findall(r"`([^`]+/)`", cells[1]))
    return table


def test_every_shared_file_name_is_a_documented_parallel():
    shared, table = shared_names(), documented()
    undocumented = {name: sorted(where) for name, where in shared.items() if name not in table}
    assert not undocumented, (
        f"modules share a file name without a documented parallel role (rename one, or add a row): {undocumented}"
    )


def test_the_table_matches_the_tree():
    shared, table = shared_names(), documented()
    stale = {
        name: (sorted(where), sorted(shared.get(name, ())))
        for name, where in table.items()
        if shared.get(name) != where
    }
    assert not stale, f"rows of 'Parallel modules' that no longer match the tree (documented, actual): {stale}"


def test_the_check_sees_a_new_shared_name(tmp_path: Path):
    for folder in ("a", "b/c"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "helpers.py").write_text("")
        (tmp_path / folder / "__init__.py").write_text("")
    assert shared_names(tmp_path) == {"helpers.py": {"a/", "b/c/"}}
