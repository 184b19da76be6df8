"""`answer_length`: the final answer is long enough (words, characters) and, optionally, not too long: a summary is
more than "Done.", a one-line status is not an essay."""

from __future__ import annotations

from typing import Any, Literal, Self

from pydantic import Field, model_validator

from coworkenv.checks.answers import ScopedCheck, text_of
from coworkenv.checks.base import CheckKind, Evidence, Outcome, outcome, register_kind


class AnswerLength(ScopedCheck):
    kind: Literal["answer_length"]
    min_words: int | None = Field(default=None, ge=1)
    min_chars: int | None = Field(default=None, ge=1)
    max_chars: int | None = Field(default=None, ge=1)

    @model_validator(mode="after")
    def _bounds(self) -> Self:
        if self.min_words is None and self.min_chars is None:
            raise ValueError("give min_words or min_chars (or both)")
        if self.max_chars is not None and self.max_chars < (self.min_chars or 0):
            raise ValueError("max_chars is less than min_chars")
        return self


def measure(text: str) -> tuple[int, int]:
    """(words, characters) with surrounding whitespace ignored."""
    text = text.strip()
    return len(text.split()), len(text)


def evaluate(check: AnswerLength, ev: Evidence) -> Outcome:
    words, chars = measure(text_of(check, ev))
    short = (check.min_words is not None and words < check.min_words) or (
        check.min_chars is not None and chars < check.min_chars
    )
    long = check.max_chars is not None and chars > check.max_chars
    where = "answer" if check.scope == "answer" else "messages"
    limits = (("min_words", check.min_words), ("min_chars", check.min_chars), ("max_chars", check.max_chars))
    bounds = ", ".join(f"{k} {v}" for k, v in limits if v is not None)
    measured = f"{where}: {words} words, {chars} characters"
    return outcome(not short and not long, measured, f"{measured}; wanted {bounds}")


def recompute(check: dict[str, Any], ev: Evidence, spec: Any) -> Any:
    """Bounds widened just enough for the (trusted) oracle's answer; never below two words, which "Done." would meet."""
    words, chars = measure(text_of(AnswerLength.model_validate(check), ev))
    if words < 2:
        return None
    fixed = dict(check)
    if check.get("min_words") is not None:
        fixed["min_words"] = min(check["min_words"], words)
    if check.get("min_chars") is not None:
        fixed["min_chars"] = min(check["min_chars"], chars)
    if check.get("max_chars") is not None:
        fixed["max_chars"] = max(check["max_chars"], chars)
    return fixed


KIND = register_kind(
    CheckKind(name="answer_length", model=AnswerLength, evaluate=evaluate, recompute=recompute, answer=True)
)
