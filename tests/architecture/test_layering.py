"""The layering of docs/architecture.md ("Layers"), enforced over every import in the library (inside functions too):
a package imports only packages of its own layer or below."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.support import ROOT

PACKAGE = ROOT / "coworkenv"

LAYERS: list[set[str]] = [
    {
        "__init__",
        "errors",
        "fileio",
        "redact",
        "canonical",
        "memo",
        "frozen",
        "timeutil",
        "airflow_env",
        "registry",
        "caps",
        "progress",
    },
    {"sandbox", "llm", "judge"},
    {"workspace"},
    {"checks"},
    {"spec"},
    {"episode"},
    {"agents"},
    {"grading"},
    {"synth", "importers"},
    {"validate"},
    {"repair"},
    {"data"},
    {"rollout"},
    {"eval"},
    {"train"},
    {"models"},
    {"quality"},
    {"pipeline"},
    {"cli", "__main__", "ui"},
]
"""Bottom to top: each line may use the lines above it in this list (and itself), never the ones below. `ui` is what the
Airflow plugin registers in the API server: a top layer, beside the CLI."""

AIRFLOW_ADAPTERS = (PACKAGE / "pipeline" / "airflow.py", PACKAGE / "ui" / "auth.py")
"""The DAGs' adapter and the pages' sign-in: the only modules that import Airflow, inside functions."""

RUNTIME = "coworkenv.workspace.runtime"
"""The mutable workspace that dispatches tool calls: the declarations below the episode must not need it."""


def _level(unit: str) -> int:
    return next(i for i, layer in enumerate(LAYERS) if unit in layer)


def _unit(path: Path) -> str:
    parts = path.relative_to(PACKAGE).parts
    return parts[0].removesuffix(".py")


def _imports(path: Path) -> list[tuple[int, str, bool]]:
    """(line, module, at module level) for every absolute import in the file, TYPE_CHECKING blocks excluded."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    type_checking = {
        id(n)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for n in ast.walk(node)
    }
    top = {id(n) for n in tree.body}
    found = []
    for node in ast.walk(tree):
        if id(node) in type_checking:
            continue
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, id(node) in top) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module, id(node) in top))
    return found


FILES = sorted(PACKAGE.rglob("*.py"))


def test_every_unit_of_the_library_has_a_layer():
    units = {_unit(p) for p in FILES}
    assert units <= set().union(*LAYERS), sorted(units - set().union(*LAYERS))


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_go_down_the_layers(path: Path):
    unit = _unit(path)
    for line, module, _ in _imports(path):
        if not module.startswith("coworkenv"):
            continue
        target = "__init__" if module == "coworkenv" else module.split(".")[1]
        assert _level(target) <= _level(unit), (
            f"{path.relative_to(ROOT)}:{line}: {unit} imports {module}, a layer above it"
        )
        if unit in ("workspace", "checks", "spec") and path.name != "runtime.py":
            assert not module.startswith(RUNTIME), (
                f"{path.relative_to(ROOT)}:{line}: {unit} imports the runtime ({module})"
            )


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_only_the_airflow_adapters_import_airflow_and_never_at_module_level(path: Path):
    for line, module, top in _imports(path):
        if module == "airflow" or module.startswith("airflow."):
            assert path in AIRFLOW_ADAPTERS and not top, f"{path.relative_to(ROOT)}:{line} imports {module}"


def test_the_layers_are_what_the_code_needs():
    """Every layer is used by some layer above it (a layer list with dead entries would hide mistakes)."""
    used = {
        module.split(".")[1] for path in FILES for _, module, _ in _imports(path) if module.startswith("coworkenv.")
    }
    unused = set().union(*LAYERS[1:-1]) - used
    assert not unused, sorted(unused)


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_modules_stay_small(path: Path):
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= 500, f"{path.relative_to(ROOT)} has {lines} lines: split it by concern"


SIDEWAYS: dict[str, tuple[str, ...]] = {
    "ui": ("coworkenv.pipeline.nightly",),
    "eval": ("coworkenv.synth.planner.CapabilityProfile", "coworkenv.synth.planner.ProfileRow"),
    "grading": ("coworkenv.agents",),
    "data": ("coworkenv.validate",),
    "checks": ("coworkenv.llm",),
}
"""Imports the layers allow but the structure does not want: the pages need the run folder's names (`pipeline.rundir`),
not the nightly job; the capability profile an evaluation measures is a contract of `spec.capabilities`, not the
planner's; releases store the battery's verdicts (`spec.verdict`) without importing the battery; grading plays the
core's scripted policies and takes any other as a `Policy`, it does not look agents up; a check that needs a judge
gets the one its evidence carries (`checks.base.Judge`), never the endpoint's client. An entry forbids the module or
name and everything under it."""


def _imported_names(path: Path) -> list[tuple[int, str]]:
    """(line, `module` or `module.name`) for every absolute import and every name imported from a module."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found += [(node.lineno, node.module)] + [
                (node.lineno, f"{node.module}.{alias.name}") for alias in node.names
            ]
    return found


@pytest.mark.parametrize("unit", sorted(SIDEWAYS))
def test_no_sideways_imports(unit: str):
    for path in (p for p in FILES if _unit(p) == unit):
        for line, name in _imported_names(path):
            banned = [b for b in SIDEWAYS[unit] if name == b or name.startswith(f"{b}.")]
            assert not banned, f"{path.relative_to(ROOT)}:{line}: {unit} imports {name}"
