"""`file_contains`: the file holds a text (case-insensitive unless asked) or matches a regex."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Literal, Self

from pydantic import model_validator

from coworkenv.checks.base import DROP, CheckBase, CheckKind, Evidence, Outcome, exactly_one, outcome, register_kind
from coworkenv.checks.files import path_references, strengthen_to_content
from coworkenv.checks.text import added_lines


class FileContains(CheckBase):
    kind: Literal["file_contains"]
    path: str
    text: str | None = None
    regex: str | None = None
    case_sensitive: bool = False

    @model_validator(mode="after")
    def _one(self) -> Self:
        exactly_one(self, "text", "regex")
        if self.regex is not None:
            try:
                re.compile(self.regex)
            except re.error as exc:
                raise ValueError(f"regex {self.regex!r} does not compile: {exc}") from None
        return self


@lru_cache(maxsize=1024)
def _regex(pattern: str, case_sensitive: bool) -> re.Pattern[str]:
    return re.compile(pattern, 0 if case_sensitive else re.IGNORECASE)


def evaluate(check: FileContains, ev: Evidence) -> Outcome:
    content = ev.final_state["files"].get(check.path)
    if content is None:
        return False, f"{check.path} does not exist"
    if check.regex is not None:
        found = _regex(check.regex, check.case_sensitive).search(content) is not None
        what = f"regex {check.regex!r}"
    else:
        found = check.text in content if check.case_sensitive else check.text.lower() in content.lower()
        what = repr(check.text)
    return outcome(found, f"{check.path} contains {what}", f"{check.path} does not contain {what}")


def recompute(check: dict[str, Any], ev: Evidence, spec: Any) -> Any:
    """The first line the oracle added to the file."""
    content = ev.final_state["files"].get(check["path"])
    if content is None:
        return DROP
    added = added_lines(ev.initial_state["files"].get(check["path"]), content)
    if not added:
        return None
    new = {k: v for k, v in check.items() if k not in ("regex", "text")}
    return {**new, "text": added[0][:200]}


KIND = register_kind(CheckKind(
    name="file_contains", model=FileContains, evaluate=evaluate,
    references=lambda check, refs: path_references(check.path, refs), recompute=recompute, strengthen=strengthen_to_content,
    evidence_for=frozenset({"data_analysis"}),
))  # fmt: skip
