"""Citations of documentation sections resolve. Code, tests and docs cite a section by its page and name —
`docs/design/contracts.md, "Scoring"`, `docs/design/pipeline.md ("Running", "Profiles")`, `README.md §Name` — and
each such page must exist and hold a heading of that name; so must the page and anchor of every relative markdown
link in the docs. `docs/architecture.md` stays an overview one reads in an afternoon: at most 300 lines
(docs/architecture.md, "Concepts")."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support import ROOT

MAX_OVERVIEW_LINES = 300

# What is scanned: every text file of the checkout but what is not ours (virtual environments, caches, data).
SUFFIXES = {".py", ".md", ".yml", ".yaml", ".toml", ".jinja", ".sh", ".cfg", ".txt", ".sql", ".ini"}
NAMES = {"Makefile", "Dockerfile", "run"}
SKIP_ANYWHERE = {
    ".git",
    ".venv",
    "venv",
    ".airflow",
    ".pytest_cache",
    ".hypothesis",
    ".ruff_cache",
    ".wheels",
    "__pycache__",
    "node_modules",
}
SKIP_AT_ROOT = {"data", "out", "build", "dist", "mutants", "models"}

# A page: a markdown file under docs/, or README.md (not a README.md of a subfolder: `examples/README.md`).
PAGE = re.compile(r"(?<![\w/.-])(?P<page>docs/[\w./-]+?\.md|README\.md)(?![\w-])")
# Whitespace between the parts of a citation; a line break may carry a comment leader (`#`, `--`, `//`, `{#-`).
GAP = r"(?:[ \t]|\n[ \t]*(?:\#+|--|//|\{\#-?)?[ \t]*)"
# After the page (and the closing backtick of `docs/x.md`): ", ", " (", or plain whitespace, then the first name.
LEAD = re.compile(rf"`?(?:,{GAP}*\(?|{GAP}*\(|{GAP}+){GAP}*(?=[\"'§])")
# A section name: "double" or 'single' quoted (one line break allowed inside), or §Word.
NAME = re.compile(r"\"(?P<dq>[^\"\n]+(?:\n[^\"\n]+)?)\"|'(?P<sq>[^'\n]+(?:\n[^'\n]+)?)'|§(?P<sect>\"[^\"\n]+\"|[\w-]+)")
# Between names: `"A", "B"`, `"A"; "B"`, `"A" and "B"`.
BETWEEN = re.compile(rf"{GAP}*(?:,|;|\band\b){GAP}*(?=[\"'§])")
# A relative markdown link: [text](target.md#anchor), [text](#anchor).
LINK = re.compile(r"\[[^\]\n]*\]\((?P<target>[^)\s]+)\)")
FENCE = re.compile(r"^(```|~~~)")
HEADING = re.compile(r"^#{1,6}[ \t]+(?P<text>.+?)[ \t]*#*[ \t]*$")


@dataclass(frozen=True)
class Citation:
    source: str  # path relative to the root
    line: int
    page: str
    names: tuple[str, ...]

    def where(self) -> str:
        return f"{self.source}:{self.line}"


def _flat(name: str) -> str:
    """A name broken over lines, perhaps with a comment leader on the second, as one line."""
    return re.sub(r"\s*\n[ \t]*(?:#+|--|//|\{#-?)?[ \t]*", " ", name).strip()


def citations_in(text: str, source: str = "<text>") -> list[Citation]:
    """Every page cited in `text`, with the section names that follow it (none for a bare mention of a page)."""
    found = []
    for m in PAGE.finditer(text):
        names, pos = [], m.end()
        lead = LEAD.match(text, pos)
        if lead:
            pos = lead.end()
            while (name := NAME.match(text, pos)) is not None:
                names.append(_flat(name.group("dq") or name.group("sq") or name.group("sect").strip('"')))
                pos = name.end()
                between = BETWEEN.match(text, pos)
                if between is None:
                    break
                pos = between.end()
        found.append(Citation(source, text.count("\n", 0, m.start()) + 1, m.group("page"), tuple(names)))
    return found


def headings(path: Path) -> list[str]:
    out, fenced = [], False
    for line in path.read_text(encoding="utf-8").splitlines():
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced and (h := HEADING.match(line)):
            out.append(h.group("text"))
    return out


def has_section(heads: list[str], name: str) -> bool:
    """A heading names the section: exactly, without its "(contract)" mark, or followed by a qualifier
    ("Calibration" names "Calibration: comparing figures from different machines", "Local model inference" names
    "Local model inference (the `hf:` agent on …)")."""
    for head in heads:
        for h in (head, head.replace("`", "")):
            if name in (h, re.sub(r"\s*\(contract\)$", "", h)):
                return True
            if any(h.startswith(name + sep) for sep in (":", " (", " —", ",")):
                return True
    return False


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for head in headings(path):
        base = slug(head)
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def text_files(root: Path = ROOT) -> Iterator[Path]:
    for folder, dirs, files in os.walk(root):
        here = Path(folder)
        dirs[:] = sorted(
            d
            for d in dirs
            if d not in SKIP_ANYWHERE and not d.endswith(".egg-info") and not (here == root and d in SKIP_AT_ROOT)
        )
        for name in sorted(files):
            if Path(name).suffix in SUFFIXES or name in NAMES:
                yield here / name


def all_citations() -> list[Citation]:
    found = []
    for path in text_files():
        if path == Path(__file__).resolve():  # its examples of broken citations are meant to be broken
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        found += citations_in(text, path.relative_to(ROOT).as_posix())
    return found


def unresolved(cites: list[Citation], root: Path = ROOT) -> list[str]:
    problems, cache = [], {}
    for c in cites:
        page = root / c.page
        if not page.is_file():
            problems.append(f"{c.where()}: {c.page} does not exist")
            continue
        heads = cache.setdefault(c.page, headings(page))
        problems += [f'{c.where()}: {c.page} has no heading "{n}"' for n in c.names if not has_section(heads, n)]
    return problems


def broken_links(root: Path = ROOT) -> list[str]:
    problems = []
    pages = [root / "README.md", *sorted((root / "docs").rglob("*.md"))]
    for page in pages:
        text = page.read_text(encoding="utf-8")
        for m in LINK.finditer(text):
            target = m.group("target")
            if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
                continue
            file, _, anchor = target.partition("#")
            if file and not file.endswith(".md"):
                continue
            where = f"{page.relative_to(root).as_posix()}:{text.count(chr(10), 0, m.start()) + 1}"
            linked = (page.parent / file).resolve() if file else page
            if not linked.is_file():
                problems.append(f"{where}: {target} does not exist")
            elif anchor and anchor not in anchors(linked):
                problems.append(f"{where}: {target} has no heading with anchor #{anchor}")
    return problems


def test_every_cited_section_exists():
    cites = all_citations()
    assert sum(1 for c in cites if c.names) > 100, "the citation pattern no longer finds the repository's citations"
    problems = unresolved(cites)
    assert not problems, "unresolved citations:\n" + "\n".join(problems)


def test_every_relative_link_in_the_docs_resolves():
    problems = broken_links()
    assert not problems, "broken links:\n" + "\n".join(problems)


def test_the_overview_stays_short():
    lines = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MAX_OVERVIEW_LINES, (
        f"docs/architecture.md has {len(lines)} lines (at most {MAX_OVERVIEW_LINES}): move detail to docs/design/"
    )


SAMPLE = '''\
"""One (docs/design/contracts.md, "Scoring"; a contract), two (docs/design/pipeline.md,
"Bounded memory"), three `docs/design/evaluation.md`, "Evaluation metrics and
reports". A bare mention of docs/operations.md.
"""
# four (docs/design/training.md, "Models", "Importing a GGUF base") and five (docs/design/agents-and-rollouts.md,
# "Agents" and "Rollouts"); six docs/design/contracts.md ("Typed
# record collections"), seven `docs/design/data.md` "SQL", eight README.md §Layout.
x = "nine (docs/design/validation-and-repair.md, 'Repair')."
# not a citation: examples/README.md, "Scoring"; docs/benchmarks.md's figures; "stale: README.md" in err
'''


def test_the_parser_reads_every_citation_style():
    got = [(c.line, c.page, c.names) for c in citations_in(SAMPLE)]
    assert got == [
        (1, "docs/design/contracts.md", ("Scoring",)),
        (1, "docs/design/pipeline.md", ("Bounded memory",)),
        (2, "docs/design/evaluation.md", ("Evaluation metrics and reports",)),
        (3, "docs/operations.md", ()),
        (5, "docs/design/training.md", ("Models", "Importing a GGUF base")),
        (5, "docs/design/agents-and-rollouts.md", ("Agents", "Rollouts")),
        (6, "docs/design/contracts.md", ("Typed record collections",)),
        (7, "docs/design/data.md", ("SQL",)),
        (7, "README.md", ("Layout",)),
        (8, "docs/design/validation-and-repair.md", ("Repair",)),
        (9, "docs/benchmarks.md", ()),
        (9, "README.md", ()),
    ]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('(docs/design/contracts.md, "Scorin")', 'src.py:1: docs/design/contracts.md has no heading "Scorin"'),
        ('(docs/architecture.md, "Scoring")', 'src.py:1: docs/architecture.md has no heading "Scoring"'),
        ('\n(docs/design/nowhere.md, "Scoring")', "src.py:2: docs/design/nowhere.md does not exist"),
    ],
)
def test_a_broken_citation_is_reported_with_its_place(text, problem):
    assert unresolved(citations_in(text, "src.py")) == [problem]


def test_a_section_is_named_by_its_heading_or_a_prefix_of_it():
    heads = ["Tools (contract)", "Calibration: comparing figures", "Local model inference (the `hf:` agent)"]
    assert all(has_section(heads, n) for n in ("Tools", "Tools (contract)", "Calibration", "Local model inference"))
    assert not any(has_section(heads, n) for n in ("Tool", "Calib", "Local model"))
    assert slug("Tools (contract)") == "tools-contract" and slug("How to add …") == "how-to-add-"
