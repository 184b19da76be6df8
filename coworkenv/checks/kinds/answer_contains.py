"""`answer_contains`: the final answer mentions a text, or one of several (case-insensitive)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, Self

from pydantic import model_validator

from coworkenv.checks.base import DROP, CheckBase, CheckKind, Evidence, Outcome, exactly_one, outcome, register_kind
from coworkenv.checks.text import phrase_find

MIN_LEAK_CHARS = 3
"""Shorter expected texts are not looked for in the instruction."""


class AnswerContains(CheckBase):
    kind: Literal["answer_contains"]
    text: str | None = None
    any_of: list[str] | None = None

    @model_validator(mode="after")
    def _one(self) -> Self:
        exactly_one(self, "text", "any_of")
        return self

    @property
    def options(self) -> list[str]:
        return [self.text] if self.text is not None else list(self.any_of or [])


def evaluate(check: AnswerContains, ev: Evidence) -> Outcome:
    answer = ev.answer.lower()
    found = [o for o in check.options if o.lower() in answer]
    return outcome(bool(found), f"answer mentions {found[0]!r}" if found else "", f"answer lacks {check.options}")


def recompute(check: dict[str, Any], ev: Evidence, spec: Any) -> Any:
    """Only the options the oracle's answer mentions; a single text cannot be recomputed."""
    if not check.get("any_of"):
        return DROP
    answer = ev.answer.lower()
    kept = [o for o in check["any_of"] if o.lower() in answer]
    return {**check, "any_of": kept} if kept else DROP


def leaks(check: AnswerContains, instruction: str, workspace_text: Callable[[], str]) -> list[dict[str, Any]]:
    """An option of ≥ 3 characters that the instruction contains as a whole word or phrase and that carries
    information the agent has to find out: a digit (figures, dates, ids), an `@` (an address), or a phrase of two or
    more words that also occurs in the workspace (a name, a title). A single alphabetic word is exempt: it is either
    the instruction's own vocabulary or one of the choices it lays out."""
    found = []
    for option in check.options:
        text = " ".join(option.split())
        hit = phrase_find(text, instruction) if len(text) >= MIN_LEAK_CHARS else None
        if hit is None:
            continue
        informative = any(ch.isdigit() for ch in text) or "@" in text
        if not informative and len(text.split()) >= 2:
            informative = text.lower() in workspace_text()
        if informative:
            found.append({"source": "answer_contains", "check": check.id, "value": option, "found": hit})
    return found


KIND = register_kind(CheckKind(
    name="answer_contains", model=AnswerContains, evaluate=evaluate, recompute=recompute, leaks=leaks, answer=True,
))  # fmt: skip
