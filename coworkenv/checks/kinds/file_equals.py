"""`file_equals`: the file has exactly this content (trailing whitespace ignored)."""

from __future__ import annotations

from typing import Any, Literal

from coworkenv.checks.base import DROP, CheckBase, CheckKind, Evidence, Outcome, outcome, register_kind
from coworkenv.checks.files import path_references
from coworkenv.checks.text import normalized_text


class FileEquals(CheckBase):
    kind: Literal["file_equals"]
    path: str
    content: str


def evaluate(check: FileEquals, ev: Evidence) -> Outcome:
    content = ev.final_state["files"].get(check.path)
    if content is None:
        return False, f"{check.path} does not exist"
    same = normalized_text(content) == normalized_text(check.content)
    return outcome(same, f"{check.path} has the expected content", f"{check.path} differs from the expected content")


def recompute(check: dict[str, Any], ev: Evidence, spec: Any) -> Any:
    content = ev.final_state["files"].get(check["path"])
    return DROP if content is None else {**check, "content": content}


KIND = register_kind(
    CheckKind(
        name="file_equals",
        model=FileEquals,
        evaluate=evaluate,
        references=lambda check, refs: path_references(check.path, refs),
        recompute=recompute,
        evidence_for=frozenset({"data_analysis"}),
    )
)
