"""`unchanged`: a whole service, one collection of it, or one file, is as it was: it penalizes collateral damage."""

from __future__ import annotations

from typing import Any, Literal, Self

from pydantic import model_validator

from coworkenv.checks.base import (
    CheckBase,
    CheckKind,
    Evidence,
    Outcome,
    References,
    exactly_one,
    outcome,
    register_kind,
)
from coworkenv.checks.files import path_references
from coworkenv.workspace.service import SERVICES
from coworkenv.workspace.state import SERVICE_NAMES

ServiceName = Literal[SERVICE_NAMES]  # type: ignore[valid-type]


class Unchanged(CheckBase):
    kind: Literal["unchanged"]
    service: ServiceName | None = None
    collection: str | None = None
    """With `service`: only this collection of it (`records`: `crm.customers`)."""
    path: str | None = None

    @model_validator(mode="after")
    def _one(self) -> Self:
        exactly_one(self, "service", "path")
        if self.collection is not None:
            if self.service is None:
                raise ValueError("`collection` goes with `service`")
            problem = SERVICES.get(self.service).collection_error(self.collection)
            if problem:
                raise ValueError(problem)
        return self


def _records(state: dict[str, Any], service: str, collection: str) -> list[dict[str, Any]] | None:
    return SERVICES.get(service).records_of(state[service], collection)


def evaluate(check: Unchanged, ev: Evidence) -> Outcome:
    if check.collection is not None:
        what = f"{check.service} {check.collection}"
        same = _records(ev.initial_state, check.service, check.collection) == _records(
            ev.final_state, check.service, check.collection
        )
        return outcome(same, f"{what} unchanged", f"{what} was changed")
    if check.service is not None:
        same = ev.initial_state[check.service] == ev.final_state[check.service]
        return outcome(same, f"{check.service} unchanged", f"{check.service} was changed")
    same = ev.initial_state["files"].get(check.path) == ev.final_state["files"].get(check.path)
    return outcome(same, f"{check.path} unchanged", f"{check.path} was changed")


def references(check: Unchanged, refs: References) -> None:
    if check.path is not None:
        path_references(check.path, refs)
    elif check.collection is not None and not refs.in_any_state(
        lambda s: isinstance(s.get(check.service), dict) and _records(s, check.service, check.collection) is not None
    ):
        refs.miss(
            check.collection, f"{check.service} has no collection {check.collection!r}, initially or after the oracle"
        )


KIND = register_kind(CheckKind(name="unchanged", model=Unchanged, evaluate=evaluate, references=references, guard=True))
