"""Reading one Claw-Eval task folder as data: `task.yaml` (YAML's safe loader), the JSON fixtures under `fixtures/`,
and the literal constants of `grader.py` (parsed with `ast`, never run). A task whose task.yaml has a wrongly-typed
field, or with a file that leads out of its folder, is read no further: it is reported as not mapped."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, Field, TypeAdapter, ValidationError
from typing_extensions import TypedDict

from coworkenv.caps import CAPS
from coworkenv.errors import CoworkEnvError, format_validation_error
from coworkenv.fileio import parse_json, parse_yaml, read_text

TASK_FILE = "task.yaml"
MAX_TASKS = 10_000
"""Task folders one import reads: a directory holding more is refused rather than half read."""


@dataclass(frozen=True)
class SourceTask:
    folder: Path
    data: dict[str, Any]
    """task.yaml, as YAML's safe loader read it."""
    fixtures: dict[str, Any] = field(default_factory=dict)
    """`<service>/<file>` (relative to `fixtures/`) → parsed JSON, or the text of a .txt/.md/.csv file."""
    skipped: list[str] = field(default_factory=list)
    """Fixture files that are neither (binary, databases, scripts): reported, never read."""
    constants: dict[str, Any] = field(default_factory=dict)
    """`NAME` → value of every upper-case literal assignment in grader.py (module or class level)."""
    problem: str = ""
    """Why the task cannot be mapped at all; then `data` may be partial or empty, and nothing else is read."""


class Unmappable(Exception):
    """A task the import reports as not mapped, and goes on; the message says why."""


def _single(value: Any) -> Any:
    if isinstance(value, list | dict):
        raise ValueError("should be a single value, not a list or a mapping")
    return value


def _text_or_texts(value: Any) -> Any:
    if value is not None and not isinstance(value, str | list):
        raise ValueError("should be a text or a list of texts")
    return value


_Items = Annotated[int, Field(ge=0, le=CAPS.collection_items)]


class _Match(TypedDict, total=False):
    id: Annotated[Any, AfterValidator(_single)]  # looked up among the record ids


class _Check(TypedDict, total=False):
    check: _Check  # a group member may wrap its check; a null one would be read as the member itself
    checks: list[_Check] | None
    match: _Match | None
    fields: dict[Any, Any] | None
    body_contains: Annotated[Any, AfterValidator(_text_or_texts)]
    count: _Items | None
    min_calls: Annotated[int, Field(ge=0, le=CAPS.trajectory_calls)] | None  # the oracle makes this many calls
    min_length: Annotated[int, Field(ge=0, le=CAPS.string_chars)] | None
    k: _Items | None


class _Component(TypedDict, total=False):
    weight: float | None
    requires: list[Any] | None
    check: _Check | None


class _TaskYaml(TypedDict, total=False):
    tools: list[Any] | None
    user_agent: dict[Any, Any] | None
    scoring_components: list[_Component] | None
    safety_checks: list[dict[Any, Any]] | None


_SHAPE = TypeAdapter(_TaskYaml)
"""The types of the task.yaml fields that the mapping and the oracle rely on (None: absent), checked once, where the
YAML is read; the other fields they read through `str()`, check themselves, or leave to TaskSpec validation. Checked,
never converted: the mapping reads the YAML as written."""


def task_folders(root: Path) -> list[Path]:
    """Every folder under `root` (itself included) that holds a task.yaml, sorted."""
    if not root.exists():
        raise CoworkEnvError(f"{root}: no such directory")
    if not root.is_dir():
        raise CoworkEnvError(f"{root}: not a directory")
    folders = sorted(p.parent for p in root.rglob(TASK_FILE) if p.is_file())
    if not folders:
        raise CoworkEnvError(f"{root}: no {TASK_FILE} found (expected tasks/<name>/{TASK_FILE})")
    if len(folders) > MAX_TASKS:
        raise CoworkEnvError(f"{root}: {len(folders)} task folders are more than {MAX_TASKS}")
    return folders


def _yaml(path: Path) -> dict[str, Any]:
    text = read_text(path)
    if len(text) > CAPS.spec_chars:
        raise CoworkEnvError(f"{path}: {len(text)} characters are more than {CAPS.spec_chars}")
    data = parse_yaml(text, str(path))
    if not isinstance(data, dict):
        raise CoworkEnvError(f"{path}: expected a YAML mapping, got {type(data).__name__}")
    prompt = data.get("prompt")
    text_ok = isinstance(prompt, dict) and isinstance(prompt.get("text"), str) and prompt["text"].strip()
    if not isinstance(data.get("task_id"), str) or not text_ok:
        raise CoworkEnvError(f"{path}: not a Claw-Eval task (needs `task_id` and `prompt.text`)")
    return data


def _check_shape(data: dict[str, Any]) -> None:
    try:
        _SHAPE.validate_python(data)
    except ValidationError as exc:
        raise Unmappable(format_validation_error(exc, TASK_FILE)) from None


def _own(folder: Path, name: str) -> Path:
    """`folder/name`, refused where a link leads it out of the folder: a task folder is untrusted, and a link could
    otherwise put any file this process can read into the TaskSpec."""
    path = folder / name
    if path.exists() and not path.resolve().is_relative_to(folder.resolve()):
        raise Unmappable(f"{name} points outside the task folder")
    return path


def _fixtures(folder: Path) -> tuple[dict[str, Any], list[str]]:
    base = _own(folder, "fixtures")  # before walking it: a link to / would walk the whole disk
    found: dict[str, Any] = {}
    skipped: list[str] = []
    if not base.is_dir():
        return found, skipped
    for path in sorted(p for p in base.rglob("*") if p.is_file()):
        name = path.relative_to(base).as_posix()
        _own(folder, f"fixtures/{name}")
        if path.suffix == ".json":
            found[name] = parse_json(read_text(path), str(path))
        elif path.suffix in (".txt", ".md", ".csv"):
            found[name] = read_text(path)
        else:
            skipped.append(name)
    return found, skipped


def _literal(node: ast.AST) -> Any:
    try:
        return ast.literal_eval(node)  # literals only: no name lookups, no calls
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def grader_constants(text: str) -> dict[str, Any]:
    """Upper-case names bound to literals in the grader's module body or class bodies (a grader's expected data)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return {}
    bodies = [tree.body, *(n.body for n in tree.body if isinstance(n, ast.ClassDef))]
    found: dict[str, Any] = {}
    for body in bodies:
        for node in body:
            targets = (
                node.targets
                if isinstance(node, ast.Assign)
                else [node.target]
                if isinstance(node, ast.AnnAssign)
                else []
            )
            value = getattr(node, "value", None)
            for target in targets:
                if isinstance(target, ast.Name) and target.id.isupper() and value is not None:
                    literal = _literal(value)
                    if literal is not None:
                        found[target.id] = literal
    return found


def read_task(folder: Path) -> SourceTask:
    """The task; a task.yaml that does not parse, or is not a Claw-Eval task, or a fixture that is not JSON, is a
    CoworkEnvError."""
    data: dict[str, Any] = {}
    try:
        data = _yaml(_own(folder, TASK_FILE))
        _check_shape(data)
        fixtures, skipped = _fixtures(folder)
        grader = _own(folder, "grader.py")
        constants = grader_constants(read_text(grader)) if grader.is_file() else {}
    except Unmappable as exc:
        return SourceTask(folder=folder, data=data, problem=str(exc))
    return SourceTask(folder=folder, data=data, fixtures=fixtures, skipped=skipped, constants=constants)
