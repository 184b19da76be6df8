"""The README's figures for the catalog (services and tools, check kinds, families, example tasks) are the code's:
each is read from the README's text and compared with its registry, so a new tool or family that leaves the README
behind fails here."""

from __future__ import annotations

import re

import pytest

from tests.support import ROOT

README = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())


def _figures(pattern: str) -> set[int]:
    found = {int(n) for n in re.findall(pattern, README)}
    assert found, f"README.md no longer says /{pattern}/"
    return found


def _actual() -> dict[str, int]:
    import coworkenv.synth.families  # noqa: F401  (registers every family)
    from coworkenv.checks import CHECK_KINDS
    from coworkenv.synth.family import FAMILIES
    from coworkenv.workspace import SERVICE_NAMES, TOOLS

    return {
        "tools": len(TOOLS.names()),
        "services": len(SERVICE_NAMES),
        "check kinds": len(CHECK_KINDS),
        "families": len(FAMILIES.names()),
        "example tasks": len(list((ROOT / "examples" / "tasks").glob("*.json"))),
    }


@pytest.mark.parametrize(
    ("what", "pattern"),
    [
        ("tools", r"(\d+) tools\b"),
        ("services", r"(\d+) services\b"),
        ("check kinds", r"(\d+) check kinds\b"),
        ("families", r"(\d+) (?:procedural )?families\b"),
        ("example tasks", r"(\d+) hand-written reference tasks\b"),
    ],
)
def test_the_readme_counts_what_the_code_has(what: str, pattern: str) -> None:
    assert _figures(pattern) == {_actual()[what]}, f"README.md's number of {what}"


def test_the_intro_names_every_service() -> None:
    from coworkenv.workspace import SERVICE_NAMES

    intro = re.search(r"simulated workspace — (.*?) —", README)
    assert intro, "README.md's intro no longer lists the services"
    assert [s.strip() for s in intro.group(1).split(",")] == list(SERVICE_NAMES)
