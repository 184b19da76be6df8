"""`file_absent`: the file is not there after the episode (deleted, or never created)."""

from __future__ import annotations

from typing import Literal

from coworkenv.checks.base import CheckBase, CheckKind, Evidence, Outcome, outcome, register_kind
from coworkenv.checks.files import path_references


class FileAbsent(CheckBase):
    kind: Literal["file_absent"]
    path: str


def evaluate(check: FileAbsent, ev: Evidence) -> Outcome:
    absent = ev.final_state["files"].get(check.path) is None
    return outcome(absent, f"{check.path} is absent", f"{check.path} still exists")


KIND = register_kind(
    CheckKind(
        name="file_absent",
        model=FileAbsent,
        evaluate=evaluate,
        references=lambda check, refs: path_references(check.path, refs, must_exist=False),
        evidence_for=frozenset({"data_analysis"}),
    )
)
