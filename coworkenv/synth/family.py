"""The family registry: procedural scenario generators, each declaring its capabilities and difficulty knobs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from coworkenv.registry import Registry

if TYPE_CHECKING:
    from coworkenv.spec.task import TaskSpec
    from coworkenv.synth.draft import Draft

KNOB_NAMES = ("effects", "distractors", "ambiguity", "fault_rate", "rounds")
LLM_FAMILY = "llm"
"""The family of tasks an LLM wrote (they belong to no procedural family)."""


@dataclass(frozen=True)
class Family:
    name: str
    capabilities: tuple[str, ...]
    services: tuple[str, ...]
    knobs: tuple[str, ...]
    """Which difficulty knobs change this family's tasks."""
    description: str
    build: Callable[[Draft], TaskSpec]
    version: int = 1

    @property
    def generator(self) -> str:
        return f"procedural:{self.name}@{self.version}"


FAMILIES: Registry[Family] = Registry("family")


def family(
    name: str, *, capabilities: tuple[str, ...], services: tuple[str, ...], knobs: tuple[str, ...], version: int = 1
) -> Callable[[Callable[[Draft], TaskSpec]], Callable[[Draft], TaskSpec]]:
    """Register a builder `fn(draft) -> TaskSpec`; its docstring's first line describes the family."""
    unknown = set(knobs) - set(KNOB_NAMES)
    if unknown:
        raise ValueError(f"family {name!r}: unknown knobs {sorted(unknown)}")

    def decorator(fn: Callable[[Draft], TaskSpec]) -> Callable[[Draft], TaskSpec]:
        description = (fn.__doc__ or "").strip().splitlines()[0] if fn.__doc__ else ""
        FAMILIES.add(name, Family(name, capabilities, services, knobs, description, fn, version))
        return fn

    return decorator


def load_families() -> Registry[Family]:
    import coworkenv.synth.families  # noqa: F401  (registers every family)

    return FAMILIES
