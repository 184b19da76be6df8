"""What every episode (and every grade) of one task shares, computed once per `TaskSpec` object.

Replay and grading run the same task many times (rollouts, the battery's six episodes, benchmarks): what depends
only on the spec is built on first use and kept, keyed by the spec object's identity. A TaskSpec is frozen, so an
entry never goes stale; the cache holds the spec itself, so its id cannot be reused while the entry lives.
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass, field
from typing import Any

from coworkenv.canonical import canonical_json, json_key
from coworkenv.memo import by_identity
from coworkenv.spec.task import TaskSpec

CACHED_SPECS = 256
"""Specs kept per cache: enough for a process working through a batch, bounded for one that sees a million."""


per_spec = by_identity(CACHED_SPECS)
"""`build(spec)` computed once per spec object."""


@dataclass(frozen=True)
class Prepared:
    initial: dict[str, Any]
    """`spec.initial_state`: shared by every episode of the task until it writes a section (`Workspace`)."""
    allowed: frozenset[str]
    blobs: dict[str, bytes] = field(default_factory=dict)
    """Sections of the initial state pickled, made on the first write to each: loading one is a cheaper private
    copy than parsing its JSON."""
    sections: dict[str, str] = field(default_factory=dict)
    """Sections of the initial state as `"key":<canonical JSON>`, made on first use: what `state_json` keeps of
    an unwritten one."""

    def copy_section(self, key: str) -> Any:
        """A private copy of one section of the initial state, for an episode to change."""
        blob = self.blobs.get(key)
        if blob is None:
            blob = self.blobs[key] = pickle.dumps(self.initial[key], protocol=pickle.HIGHEST_PROTOCOL)
        return pickle.loads(blob)

    def state_json(self, state: dict[str, Any]) -> str:
        """`canonical_json(state)` for a state whose unwritten sections are still the initial ones (the same
        objects): only the sections an episode took a copy of are serialized again."""
        parts = []
        for key in sorted(state):
            value = state[key]
            if value is not self.initial.get(key):
                parts.append(_member(key, value))
                continue
            known = self.sections.get(key)
            if known is None:
                known = self.sections[key] = _member(key, value)
            parts.append(known)
        return "{" + ",".join(parts) + "}"


def _member(key: str, value: Any) -> str:
    """One member of a canonical JSON object, as `canonical_json` writes it."""
    return f"{json_key(key)}:{canonical_json(value)}"


@per_spec
def prepared(spec: TaskSpec) -> Prepared:
    return Prepared(initial=spec.initial_state, allowed=frozenset(spec.tools))
