"""`file_contains`: the file holds a text (case-insensitive unless asked) or matches a regex (RE2: linear time, see
`checks/regex.py`)."""

from __future__ import annotations

from typing import Any, Literal, Self

from pydantic import model_validator
from pydantic_core import PydanticCustomError

from coworkenv.checks.base import (
    DROP,
    CheckBase,
    CheckKind,
    Evidence,
    Outcome,
    References,
    exactly_one,
    outcome,
    register_kind,
)
from coworkenv.checks.files import path_references, strengthen_to_content
from coworkenv.checks.regex import UNSUPPORTED, regex_problem, regex_search
from coworkenv.checks.text import added_lines


class FileContains(CheckBase):
    kind: Literal["file_contains"]
    path: str
    text: str | None = None
    regex: str | None = None
    case_sensitive: bool = False
    absent: bool = False
    """Holds when the (existing) file does NOT contain it: "the notes leave out the fixed incident" (RE2 has no
    lookarounds to say that in a pattern)."""

    @model_validator(mode="after")
    def _one(self) -> Self:
        exactly_one(self, "text", "regex")
        problem = regex_problem(self.regex) if self.regex is not None else None
        if problem is not None:
            raise PydanticCustomError(
                UNSUPPORTED,
                "regex {regex} is not supported by the linear-time engine: {problem}",
                {"regex": repr(self.regex[:200]), "problem": problem},
            )
        return self


def evaluate(check: FileContains, ev: Evidence) -> Outcome:
    content = ev.final_state["files"].get(check.path)
    if content is None:
        return False, f"{check.path} does not exist"
    if check.regex is not None:
        found = regex_search(check.regex, content, case_sensitive=check.case_sensitive)
        what = f"regex {check.regex!r}"
    else:
        found = check.text in content if check.case_sensitive else check.text.lower() in content.lower()
        what = repr(check.text)
    has, lacks = f"{check.path} contains {what}", f"{check.path} does not contain {what}"
    return outcome(not found, lacks, has) if check.absent else outcome(found, has, lacks)


def recompute(check: dict[str, Any], ev: Evidence, spec: Any) -> Any:
    """The first line the oracle added to the file (an `absent` check has nothing to take from it)."""
    content = ev.final_state["files"].get(check["path"])
    if content is None:
        return DROP
    if check.get("absent"):
        return None
    added = added_lines(ev.initial_state["files"].get(check["path"]), content)
    if not added:
        return None
    new = {k: v for k, v in check.items() if k not in ("regex", "text")}
    return {**new, "text": added[0][:200]}


def references(check: FileContains, refs: References) -> None:
    path_references(check.path, refs)
    problem = regex_problem(check.regex) if check.regex is not None else None
    if problem is not None:  # a spec built without validation (model_construct) still gets here
        refs.miss(check.regex, f"{UNSUPPORTED}: {problem}", ".regex")


KIND = register_kind(
    CheckKind(
        name="file_contains",
        model=FileContains,
        evaluate=evaluate,
        references=references,
        recompute=recompute,
        strengthen=strengthen_to_content,
        evidence_for=frozenset({"data_analysis"}),
    )
)
