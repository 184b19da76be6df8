"""`answer_contains`: the final answer mentions a text, or one of several (case-insensitive); optionally as whole
words only, not where it is negated ("we should not choose Paris"), or anywhere in the assistant's messages."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, Self

from pydantic import model_validator

from coworkenv.checks.answers import ScopedCheck, informative, texts_of
from coworkenv.checks.base import DROP, CheckKind, Evidence, Outcome, exactly_one, outcome, register_kind
from coworkenv.checks.text import mention, phrase_find

MIN_LEAK_CHARS = 3
"""Shorter expected texts are not looked for in the instruction."""


class AnswerContains(ScopedCheck):
    kind: Literal["answer_contains"]
    text: str | None = None
    any_of: list[str] | None = None
    whole_word: bool = False
    """Only whole words/phrases count ("Paris" is not found in "Parisian")."""
    not_negated: bool = False
    """An occurrence negated in its clause does not count (`checks.text.negated`)."""

    @model_validator(mode="after")
    def _one(self) -> Self:
        exactly_one(self, "text", "any_of")
        return self

    @property
    def options(self) -> list[str]:
        return [self.text] if self.text is not None else list(self.any_of or [])


def _found(check: AnswerContains, option: str, text: str) -> str | None:
    if not check.whole_word and not check.not_negated:  # the plain substring test, exactly as it always was
        return option if option.lower() in text.lower() else None
    return mention(option, text, whole_word=check.whole_word, not_negated=check.not_negated)


def mentioned(check: AnswerContains, ev: Evidence) -> list[str]:
    """The options the texts the check reads mention (as the check counts a mention)."""
    texts = texts_of(check, ev)
    return [o for o in check.options if any(_found(check, o, t) is not None for t in texts)]


def evaluate(check: AnswerContains, ev: Evidence) -> Outcome:
    found = mentioned(check, ev)
    how = " (not negated)" if check.not_negated else ""
    subject = "answer mentions" if check.scope == "answer" else "messages mention"
    lack = "answer lacks" if check.scope == "answer" else "messages lack"
    return outcome(bool(found), f"{subject} {found[0]!r}{how}" if found else "", f"{lack} {check.options}{how}")


def recompute(check: dict[str, Any], ev: Evidence, spec: Any) -> Any:
    """Only the options the oracle's answer mentions; a single text cannot be recomputed."""
    if not check.get("any_of"):
        return DROP
    kept = mentioned(AnswerContains.model_validate(check), ev)
    return {**check, "any_of": kept} if kept else DROP


def leaks(check: AnswerContains, instruction: str, workspace_text: Callable[[], str]) -> list[dict[str, Any]]:
    """An option of ≥ 3 characters that the instruction contains as a whole word or phrase and that is
    `informative` (a digit, an address, or a phrase of the workspace)."""
    found = []
    for option in check.options:
        text = " ".join(option.split())
        hit = phrase_find(text, instruction) if len(text) >= MIN_LEAK_CHARS else None
        if hit is not None and informative(text, workspace_text):
            found.append({"source": "answer_contains", "check": check.id, "value": option, "found": hit})
    return found


KIND = register_kind(
    CheckKind(
        name="answer_contains",
        model=AnswerContains,
        evaluate=evaluate,
        recompute=recompute,
        leaks=leaks,
        answer=True,
    )
)
