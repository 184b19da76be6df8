"""`answer_number`: a number in the final answer is the expected value (within `tol`): the first one, or any one; and
optionally the one a label introduces ("Total: $1,234", "total revenue was 1234"). An amount is read with its scale,
so one value passes however it is written: $3.25 billion, $3.25B and 3,250,000,000 (`checks.text.amount_value`)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Literal

from pydantic import Field

from coworkenv.checks.answers import ScopedCheck, text_of
from coworkenv.checks.base import CheckKind, Evidence, Outcome, outcome, register_kind
from coworkenv.checks.text import AMOUNT_TOKEN, amount_value, amounts_in, first_amount, number_find, phrase_pattern

LABEL_WORDS = 5
"""At most this many words between a label and its number ("total revenue for the quarter was 1234")."""

_LABEL_REACH = 80
_CLAUSE_END = re.compile(r"[;\n!?]|\.(?!\d)")


class AnswerNumber(ScopedCheck):
    kind: Literal["answer_number"]
    value: float
    tol: float = Field(default=1e-6, ge=0)
    match: Literal["first", "any"] = "first"
    """`first`: the first number read (the first labelled one with a `label`) must be the value; `any`: one of them."""
    label: str | None = Field(default=None, min_length=1)
    """Read only numbers that follow this word or phrase (whole words, case-insensitive) within a few words, in the
    same clause: with label "total", "Subtotal: 90, total: 120" reads 120."""


def labelled_numbers(label: str, text: str) -> list[float]:
    """The numbers that follow an occurrence of `label` within `LABEL_WORDS` words of its clause, one per occurrence."""
    found = []
    for hit in re.finditer(phrase_pattern(label), text, re.IGNORECASE):
        reach = text[hit.end() : hit.end() + _LABEL_REACH]
        stop = _CLAUSE_END.search(reach)
        reach = reach[: stop.start()] if stop else reach
        number = AMOUNT_TOKEN.search(reach)
        if number is not None and len(reach[: number.start()].split()) <= LABEL_WORDS:
            found.append(amount_value(reach, number))
    return found


def read(check: AnswerNumber, text: str) -> list[float]:
    """The numbers the check considers, in order."""
    if check.label is not None:
        numbers = labelled_numbers(check.label, text)
    elif check.match == "first":
        first = first_amount(text)
        numbers = [first] if first is not None else []
    else:
        numbers = amounts_in(text)
    return numbers[:1] if check.match == "first" else numbers


def evaluate(check: AnswerNumber, ev: Evidence) -> Outcome:
    numbers = read(check, text_of(check, ev))
    where = "answer" if check.scope == "answer" else "messages"
    what = f"number after {check.label!r}" if check.label is not None else "number"
    if not numbers:
        return False, f"the {where} {'contains' if check.scope == 'answer' else 'contain'} no {what}"
    hit = next((n for n in numbers if abs(n - check.value) <= check.tol), None)
    shown = ", ".join(f"{n:g}" for n in numbers[:5])
    expected = f"expected {check.value:g} ± {check.tol:g}"
    return outcome(
        hit is not None, f"{where} {what} {hit or 0:g} ≈ {check.value:g}", f"{where} {what} {shown}, {expected}"
    )


def recompute(check: dict[str, Any], ev: Evidence, spec: Any) -> Any:
    """The oracle's number: the first one after the label, or else its answer's first number, but only where that is
    a figure standing on its own (not the year of a date or the digits of an identifier)."""
    model = AnswerNumber.model_validate({**check, "value": 0})
    text = text_of(model, ev)
    if model.label is not None:
        numbers = labelled_numbers(model.label, text)
        number = numbers[0] if numbers else None
    else:
        number, figures = first_amount(text), amounts_in(text)
        if number is None or not figures or figures[0] != number:
            return None
    if number is None:
        return None
    return {**check, "value": int(number) if number.is_integer() else number}


def leaks(check: AnswerNumber, instruction: str, workspace_text: Callable[[], str]) -> list[dict[str, Any]]:
    """Any stand-alone number in the instruction (1234, 1,234, 1234.50) within the check's `tol` of the value."""
    hit = number_find(check.value, instruction, check.tol)
    return [] if hit is None else [{"source": "answer_number", "check": check.id, "value": check.value, "found": hit}]


KIND = register_kind(
    CheckKind(
        name="answer_number",
        model=AnswerNumber,
        evaluate=evaluate,
        recompute=recompute,
        leaks=leaks,
        answer=True,
        evidence_for=frozenset({"data_analysis"}),
    )
)
