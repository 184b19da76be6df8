"""The service registry: each simulated service is one module (`workspace/services/<name>.py`) that registers one
`Service` — its state model, how its state is diffed, what the task generator's `Draft` needs to fill it, and
which values its tools' targets can take — next to the tools it defines with `@tool`.

Everything else reads services from here: the workspace schema (`workspace/state.py`), snapshots and diffs,
`record` and `unchanged` checks, the generator's drafts and the repairers.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, get_args

from pydantic import BaseModel

from coworkenv.registry import Registry
from coworkenv.workspace.records import filled, sparse_defaults

Diff = Callable[[Any, Any], dict[str, Any]]
Targets = Callable[[dict[str, Any], str], list[str]]


@dataclass(frozen=True)
class Service:
    name: str
    state: Any
    """The type of the service's section of the workspace: a `Record` model, or a dict type (files, sheets)."""
    description: str
    collection: str | None = None
    """The key of the service's list of id'd records, if it keeps one: what `record` checks and record diffs read."""
    diff: Diff | None = None
    """(before, after) section → what changed; None: the records diff over `collection`."""
    draft: Mapping[str, Callable[..., Any]] = field(default_factory=dict)
    """Generator helpers, `name → fn(draft, ...)`, that `synth.draft.Draft` offers as methods (`d.add_mail(...)`)."""
    targets: Targets | None = None
    """(workspace state, target argument) → the values a tool's target can take there; None: the collection's ids."""

    def default(self) -> Any:
        """An empty section as its state type holds it: a model instance, or an empty dict (files, sheets)."""
        return self.state() if isinstance(self.state, type) and issubclass(self.state, BaseModel) else {}

    @cached_property
    def empty_state(self) -> Any:
        """The JSON of an empty section, e.g. `{"messages": []}` (shared: compare with it, never change it)."""
        default = self.default()
        return default.model_dump(mode="json", by_alias=True) if isinstance(default, BaseModel) else default

    def empty(self) -> Any:
        """A fresh empty section, to fill."""
        return copy.deepcopy(self.empty_state)

    @cached_property
    def record_defaults(self) -> dict[str, Any]:
        """The sparse fields of the collection's records (`records.sparse`): absent in the JSON means this value."""
        if self.collection is None or not (isinstance(self.state, type) and issubclass(self.state, BaseModel)):
            return {}
        info = self.state.model_fields.get(self.collection)
        item = next(iter(get_args(info.annotation)), None) if info is not None else None
        return sparse_defaults(item) if isinstance(item, type) and issubclass(item, BaseModel) else {}

    def full_record(self, record: dict[str, Any]) -> dict[str, Any]:
        """A record of the collection with its absent sparse fields at their defaults, as readers should see it."""
        return filled(record, self.record_defaults)

    def diff_sections(self, before: Any, after: Any) -> dict[str, Any]:
        if self.diff is not None:
            return self.diff(before, after)
        return diff_records(before[self.collection], after[self.collection])

    def target_values(self, state: dict[str, Any], argument: str) -> list[str]:
        if self.targets is not None:
            return self.targets(state, argument)
        if self.collection is None:
            return []
        return [r["id"] for r in state[self.name][self.collection]]


SERVICES: Registry[Service] = Registry("service")


def register_service(service: Service) -> Service:
    if service.collection is None and service.diff is None:
        raise ValueError(f"service {service.name!r} needs a `collection` or a `diff`")
    SERVICES.add(service.name, service)
    return service


def diff_records(before: list[dict], after: list[dict]) -> dict[str, Any]:
    """Records matched by id: which were added, removed, and which fields changed (old and new values)."""
    old = {r["id"]: r for r in before}
    new = {r["id"]: r for r in after}
    changed = {}
    for rid in old.keys() & new.keys():
        if old[rid] != new[rid]:
            fields = sorted(k for k in old[rid].keys() | new[rid].keys() if old[rid].get(k) != new[rid].get(k))
            changed[rid] = {k: [old[rid].get(k), new[rid].get(k)] for k in fields}
    return {
        "added": sorted(new.keys() - old.keys()),
        "removed": sorted(old.keys() - new.keys()),
        "changed": dict(sorted(changed.items())),
    }


def added_removed(before: Mapping[str, Any], after: Mapping[str, Any]) -> dict[str, list[str]]:
    """Keys added and removed between two named collections (files, sheets, channels)."""
    return {"added": sorted(after.keys() - before.keys()), "removed": sorted(before.keys() - after.keys())}
