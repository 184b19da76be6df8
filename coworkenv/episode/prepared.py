"""What every episode (and every grade) of one task shares, computed once per `TaskSpec` object.

Replay and grading run the same task many times (rollouts, the battery's six episodes, benchmarks): what depends
only on the spec is built on first use and kept, keyed by the spec object's identity. A TaskSpec is frozen, so an
entry never goes stale; the cache holds the spec itself, so its id cannot be reused while the entry lives.
"""

from __future__ import annotations

import json
import pickle
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from coworkenv.canonical import canonical_json
from coworkenv.spec.task import TaskSpec

T = TypeVar("T")

CACHED_SPECS = 256
"""Specs kept per cache: enough for a process working through a batch, bounded for one that sees a million."""


def per_spec(build: Callable[[TaskSpec], T]) -> Callable[[TaskSpec], T]:
    """`build(spec)` computed once per spec object (the oldest entries are dropped past `CACHED_SPECS`)."""
    cache: dict[int, tuple[TaskSpec, T]] = {}
    lock = threading.Lock()

    def cached(spec: TaskSpec) -> T:
        entry = cache.get(id(spec))
        if entry is not None and entry[0] is spec:
            return entry[1]
        value = build(spec)
        with lock:
            cache[id(spec)] = (spec, value)
            while len(cache) > CACHED_SPECS:
                del cache[next(iter(cache))]
        return value

    return cached


@dataclass(frozen=True)
class Prepared:
    initial_blob: bytes
    """The initial state pickled: loading it is a cheaper fresh copy than parsing its JSON again."""
    sections: dict[str, tuple[str, str]]
    """Per top-level key of the initial state: its key as JSON, and its value's canonical JSON. A section an
    episode leaves as it was keeps its text (`state_json`)."""
    allowed: frozenset[str]

    def fresh_state(self) -> dict[str, Any]:
        """A private copy of the initial state for one episode to change."""
        return pickle.loads(self.initial_blob)

    def state_json(self, state: dict[str, Any], initial: dict[str, Any], written: set[str]) -> str:
        """`canonical_json(state)`, serializing only the sections that may differ from the initial ones: those a
        write tool was called on, and any other that is not equal to its initial value. (Equality alone would not
        do: 1, 1.0 and true are equal in Python, not in JSON, and a write may swap one for another.)"""
        parts = []
        for key in sorted(state):
            known = self.sections.get(key)
            if known is not None and key not in written and state[key] == initial[key]:
                parts.append(f"{known[0]}:{known[1]}")
            else:
                parts.append(f"{json.dumps(key, ensure_ascii=False)}:{canonical_json(state[key])}")
        return "{" + ",".join(parts) + "}"


@per_spec
def prepared(spec: TaskSpec) -> Prepared:
    initial = spec.initial_state
    return Prepared(
        initial_blob=pickle.dumps(initial, protocol=pickle.HIGHEST_PROTOCOL),
        sections={key: (json.dumps(key, ensure_ascii=False), canonical_json(value)) for key, value in initial.items()},
        allowed=frozenset(spec.tools),
    )
