"""The reference pages (docs/reference/) and README.md's catalog figures are generated from the registries
(`make docs`): a tool, check kind, family, setting or example task added without regenerating them fails here."""

from __future__ import annotations

import subprocess
import sys

import pytest

from coworkenv.cli.reference import FIGURE, figures, generated, with_figures
from tests.support import ROOT


@pytest.mark.parametrize("path", sorted(generated(ROOT)), ids=lambda p: str(p.relative_to(ROOT)))
def test_generated_files_say_what_the_code_has(path):
    assert path.read_text(encoding="utf-8") == generated(ROOT)[path], (
        f"{path.relative_to(ROOT)} is stale: run `make docs`"
    )


def test_the_readme_marks_every_figure():
    marked = {m.group("name") for m in FIGURE.finditer((ROOT / "README.md").read_text(encoding="utf-8"))}
    assert marked == set(figures(ROOT))


def test_a_changed_registry_makes_the_readme_stale():
    values = figures(ROOT)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    more = with_figures(readme, {**values, "tools": str(int(values["tools"]) + 1)})
    assert more != readme and f"<!-- tools -->{int(values['tools']) + 1}<!-- /tools --> tools" in more


def test_an_unknown_marker_is_an_error():
    with pytest.raises(KeyError, match="unknown figure <!-- widgets -->"):
        with_figures("<!-- widgets -->3<!-- /widgets -->", figures(ROOT))


def test_check_names_each_stale_file(tmp_path):
    (tmp_path / "examples" / "tasks").mkdir(parents=True)
    (tmp_path / "README.md").write_text("<!-- tools -->1<!-- /tools --> tools\n", encoding="utf-8")
    command = [sys.executable, "-m", "coworkenv.cli.reference", "--root", str(tmp_path)]
    done = subprocess.run([*command, "--check"], capture_output=True, text=True, check=False)
    assert done.returncode == 1
    assert "stale: README.md" in done.stderr and "stale: docs/reference/tools.md" in done.stderr
    subprocess.run(command, check=True, capture_output=True)
    assert subprocess.run([*command, "--check"], check=False).returncode == 0
    assert (tmp_path / "README.md").read_text(
        encoding="utf-8"
    ) == f"<!-- tools -->{figures(ROOT)['tools']}<!-- /tools --> tools\n"
