"""`answer_regex`: the final answer matches a regular expression (RE2, linear time: `checks/regex.py`), e.g. a ticket
id in its format, or a summary that names a count before the word "tickets"."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, Self

from pydantic import Field, model_validator
from pydantic_core import PydanticCustomError

from coworkenv.checks.answers import ScopedCheck, informative, texts_of
from coworkenv.checks.base import DROP, CheckKind, Evidence, Outcome, outcome, register_kind
from coworkenv.checks.regex import UNSUPPORTED, regex_find, regex_problem


class AnswerRegex(ScopedCheck):
    kind: Literal["answer_regex"]
    pattern: str = Field(min_length=1)
    case_sensitive: bool = False

    @model_validator(mode="after")
    def _compiles(self) -> Self:
        problem = regex_problem(self.pattern)
        if problem is not None:
            raise PydanticCustomError(
                UNSUPPORTED,
                "pattern {pattern} is not supported by the linear-time engine: {problem}",
                {"pattern": repr(self.pattern[:200]), "problem": problem},
            )
        return self


def evaluate(check: AnswerRegex, ev: Evidence) -> Outcome:
    found = next(
        (
            m
            for m in (regex_find(check.pattern, t, case_sensitive=check.case_sensitive) for t in texts_of(check, ev))
            if m is not None
        ),
        None,
    )
    where = "answer" if check.scope == "answer" else "messages"
    return outcome(
        found is not None, f"{where} match {check.pattern!r}: {found!r}", f"{where} do not match {check.pattern!r}"
    )


def recompute(check: dict[str, Any], ev: Evidence, spec: Any) -> Any:
    """A pattern cannot be taken from the oracle's answer: one it does not match is dropped."""
    return DROP


def leaks(check: AnswerRegex, instruction: str, workspace_text: Callable[[], str]) -> list[dict[str, Any]]:
    """The instruction holds text the pattern matches and that is `informative` (a digit, an address, or a phrase of
    the workspace): the agent could pass by repeating it."""
    hit = regex_find(check.pattern, instruction, case_sensitive=check.case_sensitive)
    if hit is None or not hit.strip() or not informative(hit, workspace_text):
        return []
    return [{"source": "answer_regex", "check": check.id, "value": check.pattern, "found": hit}]


KIND = register_kind(
    CheckKind(
        name="answer_regex",
        model=AnswerRegex,
        evaluate=evaluate,
        recompute=recompute,
        leaks=leaks,
        answer=True,
    )
)
