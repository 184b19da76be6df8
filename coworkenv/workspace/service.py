"""The service registry: each simulated service is one module (`workspace/services/<name>.py`) that registers one
`Service` — its state model, how its state is diffed, what the task generator's `Draft` needs to fill it, and
which values its tools' targets can take — next to the tools it defines with `@tool`.

Everything else reads services from here: the workspace schema (`workspace/state.py`), snapshots and diffs,
`record` and `unchanged` checks, the generator's drafts and the repairers.
"""

from __future__ import annotations

import fnmatch
import pickle
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, get_args

from pydantic import BaseModel

from coworkenv.registry import Registry
from coworkenv.workspace.record_types import detached, filled, sparse_defaults

Diff = Callable[[Any, Any], dict[str, Any]]
Targets = Callable[[dict[str, Any], str], list[str]]
Collections = Callable[[Any], Mapping[str, list[dict[str, Any]]]]


@dataclass(frozen=True)
class Service:
    name: str
    state: Any
    """The type of the service's section of the workspace: a `Record` model, or a dict type (files, sheets)."""
    description: str
    writes: str | None = None
    """The capability a change to this service exercises (`communication`, `scheduling`, `authoring`): what its write
    and destructive tools declare unless they say otherwise. None: a read-only service, which can register no write."""
    collection: str | None = None
    """The key of the service's list of id'd records, if it keeps one: what `record` checks and record diffs read."""
    collections: Collections | None = None
    """For a service whose collections the task declares (`records`): section → its id'd record lists by name."""
    collection_pattern: str | None = None
    """With `collections`: the pattern a collection's name follows."""
    diff: Diff | None = None
    """(before, after) section → what changed; None: the records diff over `collection`, or per collection."""
    draft: Mapping[str, Callable[..., Any]] = field(default_factory=dict)
    """Generator helpers, `name → fn(draft, ...)`, that `synth.draft.Draft` offers as methods (`d.add_mail(...)`)."""
    targets: Targets | None = None
    """(workspace state, target argument) → the values a tool's target can take there; None: the collection's ids."""

    def default(self) -> Any:
        """An empty section as its state type holds it: a model instance (frozen, so one is shared), or a new empty
        dict (files, sheets). It is the default of every absent section of every spec validated."""
        return self._default_model if isinstance(self.state, type) and issubclass(self.state, BaseModel) else {}

    @cached_property
    def _default_model(self) -> BaseModel:
        return self.state()

    @cached_property
    def empty_state(self) -> Any:
        """The JSON of an empty section, e.g. `{"messages": []}` (shared: compare with it, never change it)."""
        default = self.default()
        return default.model_dump(mode="json", by_alias=True) if isinstance(default, BaseModel) else default

    def empty(self) -> Any:
        """A fresh empty section, to fill (unpickled: `copy.deepcopy` costs several times more, once per draft)."""
        return pickle.loads(self._empty_pickle)

    @cached_property
    def _empty_pickle(self) -> bytes:
        return pickle.dumps(self.empty_state, protocol=pickle.HIGHEST_PROTOCOL)

    # --- id'd records, one collection or many: what checks, diffs and repairers read ---------------------------

    @property
    def keeps_records(self) -> bool:
        return self.collection is not None or self.collections is not None

    def record_lists(self, section: Any) -> dict[str, list[dict[str, Any]]]:
        """The section's lists of id'd records by collection name ({} for a service without any)."""
        if self.collections is not None:
            return dict(self.collections(section))
        return {} if self.collection is None else {self.collection: section[self.collection]}

    def records_of(self, section: Any, collection: str) -> list[dict[str, Any]] | None:
        """One collection's records; None when the section has no such collection."""
        return self.record_lists(section).get(collection)

    def collection_error(self, collection: str) -> str | None:
        """Why a check cannot name this collection of the service (None: it can)."""
        if self.collections is not None:
            if self.collection_pattern is None or re.fullmatch(self.collection_pattern, collection):
                return None
            return f"{collection!r} is not a {self.name} collection name (pattern {self.collection_pattern})"
        if self.collection is None:
            return f"service {self.name!r} keeps no records"
        return None if collection == self.collection else f"service {self.name!r} has collection {self.collection!r}"

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

    def detached_record(self, record: dict[str, Any]) -> dict[str, Any]:
        """`detached(full_record(record))`, what a tool hands out: `detached` copies anyway, so the record is filled
        (copied) first only where a sparse field is absent. Read tools do this for every record they return."""
        defaults = self.record_defaults
        return detached(filled(record, defaults) if defaults and not defaults.keys() <= record.keys() else record)

    def diff_sections(self, before: Any, after: Any) -> dict[str, Any]:
        if self.diff is not None:
            return self.diff(before, after)
        if self.collections is None:
            return diff_records(before[self.collection], after[self.collection])
        old, new = self.record_lists(before), self.record_lists(after)
        return {
            name: diff_records(old.get(name, []), new.get(name, []))
            for name in sorted(old.keys() | new.keys())
            if old.get(name) != new.get(name)
        }

    def target_values(self, state: dict[str, Any], argument: str, args: Mapping[str, Any] | None = None) -> list[str]:
        """The values a tool's target argument can take in this workspace; `args`, a rule's other arguments, narrow
        them to the collections its `collection` argument names."""
        if self.targets is not None:
            return self.targets(state, argument)
        # the `collection` argument of a service with many (`records_delete(collection, id)`)
        wanted = str((args or {}).get("collection") or "*").casefold() if self.collections is not None else "*"
        lists = self.record_lists(state[self.name]).items()
        return [r["id"] for name, records in lists if fnmatch.fnmatchcase(name.casefold(), wanted) for r in records]


SERVICES: Registry[Service] = Registry("service")


def register_service(service: Service) -> Service:
    if not service.keeps_records and service.diff is None:
        raise ValueError(f"service {service.name!r} needs a `collection`, `collections` or a `diff`")
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
