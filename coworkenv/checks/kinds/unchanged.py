"""`unchanged`: a whole service, or one file, is as it was: it penalizes collateral damage."""

from __future__ import annotations

from typing import Literal, Self

from pydantic import model_validator

from coworkenv.checks.base import CheckBase, CheckKind, Evidence, Outcome, References, exactly_one, outcome, register_kind
from coworkenv.checks.files import path_references
from coworkenv.workspace.state import SERVICE_NAMES

ServiceName = Literal[SERVICE_NAMES]  # type: ignore[valid-type]


class Unchanged(CheckBase):
    kind: Literal["unchanged"]
    service: ServiceName | None = None
    path: str | None = None

    @model_validator(mode="after")
    def _one(self) -> Self:
        exactly_one(self, "service", "path")
        return self


def evaluate(check: Unchanged, ev: Evidence) -> Outcome:
    if check.service is not None:
        same = ev.initial_state[check.service] == ev.final_state[check.service]
        return outcome(same, f"{check.service} unchanged", f"{check.service} was changed")
    same = ev.initial_state["files"].get(check.path) == ev.final_state["files"].get(check.path)
    return outcome(same, f"{check.path} unchanged", f"{check.path} was changed")


def references(check: Unchanged, refs: References) -> None:
    if check.path is not None:
        path_references(check.path, refs)


KIND = register_kind(CheckKind(name="unchanged", model=Unchanged, evaluate=evaluate, references=references, guard=True))
