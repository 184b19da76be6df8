"""What the answer-reading check kinds share: the `scope` of text they read, and what of an expected answer counts
as given away when the instruction holds it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from coworkenv.checks.base import CheckBase, Evidence

Scope = Literal["answer", "messages"]
"""`answer`: the final answer only; `messages`: the text of every assistant message (`Evidence.texts`)."""


class ScopedCheck(CheckBase):
    """A check that reads the assistant's text."""

    scope: Scope = "answer"


def texts_of(check: ScopedCheck, ev: Evidence) -> tuple[str, ...]:
    """The texts the check reads, one per message, the final answer last."""
    return ev.texts if check.scope == "messages" else (ev.answer,)


def text_of(check: ScopedCheck, ev: Evidence) -> str:
    """The texts the check reads as one, messages separated by a blank line (a clause never spans two)."""
    return ev.answer if check.scope == "answer" else "\n\n".join(ev.texts)


def where(check: ScopedCheck) -> str:
    """How a reason names what was read."""
    return "answer" if check.scope == "answer" else "messages"


def informative(text: str, workspace_text: Callable[[], str]) -> bool:
    """Whether an expected text found in the instruction gives something away: a digit (figures, dates, ids), an `@`
    (an address), or a phrase of two or more words that also occurs in the workspace (a name, a title). A single
    alphabetic word is exempt: it is either the instruction's own vocabulary or one of the choices it lays out."""
    if any(ch.isdigit() for ch in text) or "@" in text:
        return True
    return len(text.split()) >= 2 and " ".join(text.split()).lower() in workspace_text()
