"""`answer_none_of`: the final answer names none of some phrases (the wrong city, the vendor not to pay), as whole
words; an occurrence negated in its clause ("not Lyon", "Lyon was ruled out") does not count."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator

from coworkenv.checks.answers import ScopedCheck, texts_of
from coworkenv.checks.base import DROP, CheckKind, Evidence, Outcome, outcome, register_kind
from coworkenv.checks.text import mention


class AnswerNoneOf(ScopedCheck):
    kind: Literal["answer_none_of"]
    phrases: list[str] = Field(min_length=1)

    @field_validator("phrases")
    @classmethod
    def _words(cls, phrases: list[str]) -> list[str]:
        if any(not p.strip() for p in phrases):
            raise ValueError("every phrase needs a word")
        return phrases


def named(check: AnswerNoneOf, ev: Evidence) -> list[tuple[str, str]]:
    """(phrase, as written) for each phrase the texts the check reads name without negating it."""
    found = []
    for phrase in check.phrases:
        hit = next(
            (h for h in (mention(phrase, t, not_negated=True) for t in texts_of(check, ev)) if h is not None), None
        )
        if hit is not None:
            found.append((phrase, hit))
    return found


def evaluate(check: AnswerNoneOf, ev: Evidence) -> Outcome:
    found = named(check, ev)
    where = "answer" if check.scope == "answer" else "messages"
    return outcome(
        not found, f"{where} name none of {check.phrases}", f"{where} name {', '.join(repr(h) for _, h in found)}"
    )


def recompute(check: dict[str, Any], ev: Evidence, spec: Any) -> Any:
    """The phrases the (trusted) oracle's answer does not name; none left: dropped."""
    wrong = {p for p, _ in named(AnswerNoneOf.model_validate(check), ev)}
    kept = [p for p in check["phrases"] if p not in wrong]
    return {**check, "phrases": kept} if kept else DROP


KIND = register_kind(
    CheckKind(
        # Holds on a run that says nothing, by design (like `unchanged`): it takes credit away from a wrong answer and
        # is paired with a check of the right one.
        name="answer_none_of",
        model=AnswerNoneOf,
        evaluate=evaluate,
        recompute=recompute,
        guard=True,
        answer=True,
    )
)
