"""Every JSON (or YAML, or SQL) file a command reads, damaged every way a file can be: missing, a directory, empty,
truncated, nested 100,000 deep, not UTF-8, lone surrogates, huge numbers, wrong types… Each case runs through the
real `main()` and must end in exit 0 or one `error:` line with exit 2, with the command's outputs untouched."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.fuzz import FULL, check, run_main, snapshot
from tests.support.fuzz_corpus import TASK, TRAJECTORY, damages, malformed_json, place, valid_document


@dataclass(frozen=True)
class FileInput:
    kind: str  # which valid document the corpus is made from
    suffix: str
    args: Callable[[Path, Path], list[str]]  # (the damaged file, a scratch folder) → the command line
    outputs: Callable[[Path], list[Path]] = lambda scratch: []
    allowed: tuple[int, ...] = (0, 2)


def _root(scratch: Path) -> str:
    return str(scratch / "data")


INPUTS = {
    "grade --task": FileInput(
        "task", ".json", lambda f, s: ["grade", "--task", str(f), "--trajectory", str(TRAJECTORY)]
    ),
    "grade --trajectory": FileInput(
        "trajectory", ".json", lambda f, s: ["grade", "--task", str(TASK), "--trajectory", str(f)]
    ),
    "run --task": FileInput(
        "task",
        ".json",
        lambda f, s: ["run", "--task", str(f), "--agent", "null", "--out", str(s / "t.json")],
        lambda s: [s / "t.json"],
    ),
    "check": FileInput("task", ".json", lambda f, s: ["check", str(f)], allowed=(0, 1, 2)),
    "check (.jsonl)": FileInput("task", ".jsonl", lambda f, s: ["check", str(f)], allowed=(0, 1, 2)),
    "demo --no-airflow": FileInput("task", ".json", lambda f, s: ["demo", str(f), "--no-airflow"], allowed=(0, 1, 2)),
    "plan --profile": FileInput(
        "profile",
        ".json",
        lambda f, s: ["plan", "--n", "4", "--profile", str(f), "--out", str(s / "p.json")],
        lambda s: [s / "p.json"],
    ),
    "plan --config": FileInput(
        "config",
        ".yaml",
        lambda f, s: ["plan", "--config", str(f), "--out", str(s / "p.json")],
        lambda s: [s / "p.json"],
    ),
    "generate --plan": FileInput(
        "plan",
        ".json",
        lambda f, s: ["generate", "--plan", str(f), "--n", "3", "--data-root", _root(s), "--run-id", "z"],
        lambda s: [s / "data"],
    ),
    "generate --tasks": FileInput(
        "task",
        ".jsonl",
        lambda f, s: ["generate", "--tasks", str(f), "--data-root", _root(s), "--run-id", "z"],
        lambda s: [s / "data"],
    ),
    "generate --config": FileInput(
        "config",
        ".yaml",
        lambda f, s: ["generate", "--config", str(f), "--n", "2", "--data-root", _root(s)],
        lambda s: [s / "data"],
    ),
    # --workers 0: a config file that reads well fails on the option, so no case runs a whole synthesis
    "synthesize --config": FileInput(
        "config",
        ".yaml",
        lambda f, s: ["synthesize", "--config", str(f), "--workers", "0", "--data-root", _root(s)],
        lambda s: [s / "data"],
    ),
    "sql --file": FileInput("task", ".sql", lambda f, s: ["sql", "--file", str(f), "--data-root", _root(s)]),
}

CASES = [
    (name, damage)
    for name, spec in INPUTS.items()
    for damage in damages(malformed_json(valid_document(spec.kind)), FULL)
]


@pytest.mark.parametrize(("name", "damage"), CASES, ids=[f"{n}:{d}" for n, d in CASES])
def test_damaged_file(name, damage, tmp_path):
    spec = INPUTS[name]
    content = malformed_json(valid_document(spec.kind))[damage]
    if spec.suffix == ".jsonl" and isinstance(content, bytes):
        content = content.replace(b"\n", b" ")  # one damaged document per line, as a .jsonl file holds it
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    damaged = place(tmp_path / f"input{spec.suffix}", content)
    outputs = spec.outputs(scratch)
    before = {p: snapshot(p) for p in outputs}
    check(run_main(spec.args(damaged, scratch)), before, spec.allowed)
