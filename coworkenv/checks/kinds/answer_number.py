"""`answer_number`: the first number in the final answer is the expected value (within `tol`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from pydantic import Field

from coworkenv.checks.base import CheckBase, CheckKind, Evidence, Outcome, outcome, register_kind
from coworkenv.checks.text import first_number, number_find, numbers_in


class AnswerNumber(CheckBase):
    kind: Literal["answer_number"]
    value: float
    tol: float = Field(default=1e-6, ge=0)


def evaluate(check: AnswerNumber, ev: Evidence) -> Outcome:
    number = first_number(ev.answer)
    if number is None:
        return False, "the answer contains no number"
    ok = abs(number - check.value) <= check.tol
    return outcome(ok, f"answer number {number:g} ≈ {check.value:g}", f"answer number {number:g}, expected {check.value:g} ± {check.tol:g}")


def recompute(check: dict[str, Any], ev: Evidence, spec: Any) -> Any:
    """The oracle answer's first number, but only where that is a figure standing on its own: not the year of a
    date or the digits of an identifier."""
    number, figures = first_number(ev.answer), numbers_in(ev.answer)
    if number is None or not figures or figures[0] != number:
        return None
    return {**check, "value": int(number) if number.is_integer() else number}


def leaks(check: AnswerNumber, instruction: str, workspace_text: Callable[[], str]) -> list[dict[str, Any]]:
    """Any stand-alone number in the instruction (1234, 1,234, 1234.50) within the check's `tol` of the value."""
    hit = number_find(check.value, instruction, check.tol)
    return [] if hit is None else [{"source": "answer_number", "check": check.id, "value": check.value, "found": hit}]


KIND = register_kind(CheckKind(
    name="answer_number", model=AnswerNumber, evaluate=evaluate, recompute=recompute, leaks=leaks, answer=True,
    evidence_for=frozenset({"data_analysis"}),
))  # fmt: skip
