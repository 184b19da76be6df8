"""`file_exists`: the file is there after the episode."""

from __future__ import annotations

from typing import Literal

from coworkenv.checks.base import CheckBase, CheckKind, Evidence, Outcome, outcome, register_kind
from coworkenv.checks.files import path_references, strengthen_to_content


class FileExists(CheckBase):
    kind: Literal["file_exists"]
    path: str


def evaluate(check: FileExists, ev: Evidence) -> Outcome:
    present = ev.final_state["files"].get(check.path) is not None
    return outcome(present, f"{check.path} exists", f"{check.path} does not exist")


KIND = register_kind(
    CheckKind(
        name="file_exists",
        model=FileExists,
        evaluate=evaluate,
        references=lambda check, refs: path_references(check.path, refs),
        strengthen=strengthen_to_content,
        evidence_for=frozenset({"data_analysis"}),
    )
)
