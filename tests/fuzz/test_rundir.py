"""A finished run's directory and release, damaged one file at a time, then each stage command that reads the damaged
file run on it: a clean one-line error (or a success where the damage is a verdict, e.g. a garbage task that the
battery rejects), and the stage's own output folder untouched when it fails."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.support.fuzz import FULL, check, run_main, snapshot
from tests.support.fuzz_corpus import DIRECTORY, MISSING, damages, malformed_json, place

STAND_IN = {"name": "a", "count": 1}
JSON_DAMAGES = damages(malformed_json(STAND_IN), FULL)
BINARY_DAMAGES = ["missing", "directory", "empty", "binary", "truncated"]

STAGE_OUTPUT = {
    "validate": "validated",
    "repair": "repaired",
    "rollout": "rollouts",
    "build": "tables",
    "gate": "quality",
}
TARGETS = {
    "config.json": ("json", ["validate", "repair", "rollout"]),
    "generated/shard-0000.tasks.jsonl": ("jsonl", ["validate"]),
    "validated/shard-0000.validations.jsonl": ("jsonl", ["repair", "rollout", "build"]),
    "repaired/validations.jsonl": ("jsonl", ["rollout", "build"]),
    "repaired/attempts.jsonl": ("jsonl", ["build"]),
    "rollouts/trajectories.jsonl": ("jsonl", ["build"]),
    "tables/tasks.parquet": ("binary", ["gate", "publish"]),
    "quality/passed.json": ("json", ["publish"]),
}
FOLDERS = {
    "generated": ["validate"],
    "validated": ["repair"],
    "repaired": ["rollout"],
    "rollouts": ["build"],
    "tables": ["gate"],
    "quality": ["publish"],
}
RELEASE_TARGETS = {"LATEST": "binary", "manifest.json": "json", "tasks/part": "binary"}
RELEASE_COMMANDS = {
    "releases": ["releases"],
    "sql": ["sql", "select count(*) as n from src_tasks", "--format", "json"],
    "export": ["export", "--release", "latest", "--format", "jsonl", "--out", "{out}"],
}


def _damage(path: Path, how: str, damage: str) -> None:
    """Replace the file at `path` with its damaged version (built from its own content where it is JSON)."""
    original = path.read_bytes() if path.is_file() else b""
    if how == "binary":
        content = {
            "missing": MISSING,
            "directory": DIRECTORY,
            "empty": b"",
            "binary": bytes(range(256)) * 4,
            "truncated": original[: len(original) // 2],
        }[damage]
    else:
        import json

        text = original.decode("utf-8")
        doc = json.loads((text.splitlines() or ["{}"])[0] if how == "jsonl" else text or "{}")
        doc = doc if isinstance(doc, dict) and doc else STAND_IN
        corpus = malformed_json(doc)
        content = corpus.get(damage, malformed_json(STAND_IN)[damage])
        if how == "jsonl" and isinstance(content, bytes):
            content = content.replace(b"\n", b" ")
    if path.is_dir():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)
    place(path, content)


def _stage(command: str, root: Path) -> tuple[list[str], list[Path]]:
    run = root / "runs" / "fz"
    outputs = [run / STAGE_OUTPUT[command]] if command in STAGE_OUTPUT else [root / "releases"]
    return [command, "--run-id", "fz", "--data-root", str(root)], outputs


RUN_CASES = [
    (target, damage, command)
    for target, (how, commands) in TARGETS.items()
    for damage in (BINARY_DAMAGES if how == "binary" else JSON_DAMAGES)
    for command in commands
]


@pytest.mark.parametrize(("target", "damage", "command"), RUN_CASES, ids=[f"{c}:{t}:{d}" for t, d, c in RUN_CASES])
def test_damaged_run_directory(target, damage, command, data_root):
    _damage(data_root / "runs" / "fz" / target, TARGETS[target][0], damage)
    args, outputs = _stage(command, data_root)
    check(
        run_main(args, timeout=120),
        {p: snapshot(p) for p in outputs},
        allowed=(0, 1, 2) if command == "gate" else (0, 2),
    )


FOLDER_CASES = [(folder, command) for folder, commands in FOLDERS.items() for command in commands]


@pytest.mark.parametrize(("folder", "command"), FOLDER_CASES, ids=[f"{c}:{f}-is-a-file" for f, c in FOLDER_CASES])
def test_stage_folder_replaced_by_a_file(folder, command, data_root):
    path = data_root / "runs" / "fz" / folder
    shutil.rmtree(path)
    path.write_text("not a folder\n", encoding="utf-8")
    args, outputs = _stage(command, data_root)
    check(
        run_main(args, timeout=120),
        {p: snapshot(p) for p in outputs},
        allowed=(0, 1, 2) if command == "gate" else (0, 2),
    )


RELEASE_CASES = [
    (target, damage, command)
    for target, how in RELEASE_TARGETS.items()
    for damage in (BINARY_DAMAGES if how == "binary" else JSON_DAMAGES)
    for command in RELEASE_COMMANDS
]


@pytest.mark.parametrize(
    ("target", "damage", "command"), RELEASE_CASES, ids=[f"{c}:{t}:{d}" for t, d, c in RELEASE_CASES]
)
def test_damaged_release(target, damage, command, data_root, tmp_path):
    release = next(p for p in (data_root / "releases").iterdir() if p.is_dir() and not p.name.startswith("."))
    if target == "LATEST":
        path = data_root / "releases" / "LATEST"
    elif target == "tasks/part":
        path = next(p for p in (release / "tasks").rglob("*.parquet"))
    else:
        path = release / target
    _damage(path, RELEASE_TARGETS[target], damage)
    out = tmp_path / "export"
    args = [a.replace("{out}", str(out)) for a in RELEASE_COMMANDS[command]] + ["--data-root", str(data_root)]
    check(run_main(args, timeout=120), {out: snapshot(out)} if command == "export" else {})


@pytest.mark.parametrize("command", list(RELEASE_COMMANDS))
@pytest.mark.parametrize("root", ["a-file", "missing", "empty-folder"])
def test_bad_data_root(command, root, tmp_path):
    path = tmp_path / "root"
    if root == "a-file":
        path.write_text("x", encoding="utf-8")
    elif root == "empty-folder":
        path.mkdir()
    out = tmp_path / "export"
    args = [a.replace("{out}", str(out)) for a in RELEASE_COMMANDS[command]] + ["--data-root", str(path)]
    check(run_main(args), {out: None} if command == "export" else {})
