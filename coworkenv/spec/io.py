"""Reading and writing TaskSpecs and trajectories: one JSON object per file, or one per line in `.jsonl`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from coworkenv.errors import CoworkEnvError, format_validation_error
from coworkenv.fileio import parse_json, read_text
from coworkenv.spec.task import TaskSpec

M = TypeVar("M", bound=BaseModel)


def parse_model(model: type[M], text: str, where: str) -> M:
    """One JSON object of `model`; an error is one line naming `where` (a file, `file:line`) and the field."""
    data = parse_json(text, where)
    if not isinstance(data, dict):
        raise CoworkEnvError(f"{where}: expected a JSON object, got {type(data).__name__}")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise CoworkEnvError(format_validation_error(exc, where)) from None


def load_model(model: type[M], path: str | Path) -> M:
    path = Path(path)
    try:
        return parse_model(model, read_text(path), str(path))
    except CoworkEnvError as exc:
        if path.suffix == ".jsonl" and "Extra data" in str(exc):  # JSON's own words would not say what is wrong
            raise CoworkEnvError(
                f"{path}: holds one JSON document per line; this takes a single one (a .json file)"
            ) from None
        raise


def iter_models(model: type[M], path: str | Path) -> Iterator[M]:
    """A `.json` file, a `.jsonl` file, or a directory of both (sorted by name)."""
    path = Path(path)
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.suffix in (".json", ".jsonl"))
        if not files:
            raise CoworkEnvError(f"{path}: no .json or .jsonl files")
        for file in files:
            yield from iter_models(model, file)
    elif path.suffix == ".jsonl":
        for number, line in enumerate(read_text(path).splitlines(), start=1):
            if line.strip():
                yield parse_model(model, line, f"{path}:{number}")
    else:
        yield load_model(model, path)


def load_task(path: str | Path) -> TaskSpec:
    return load_model(TaskSpec, path)


def load_tasks(path: str | Path) -> list[TaskSpec]:
    tasks = list(iter_models(TaskSpec, path))
    seen: set[str] = set()
    for task in tasks:
        if task.id in seen:
            raise CoworkEnvError(f"{path}: task id {task.id!r} appears twice")
        seen.add(task.id)
    return tasks
