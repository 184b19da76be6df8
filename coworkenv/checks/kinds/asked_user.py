"""`asked_user`: a message to the simulated user (not the final answer) mentions one of these keywords."""

from __future__ import annotations

from typing import Any, Literal

from coworkenv.checks.base import DROP, CheckBase, CheckKind, Evidence, Outcome, outcome, register_kind
from coworkenv.checks.text import as_list


class AskedUser(CheckBase):
    kind: Literal["asked_user"]
    about: str | list[str]


def evaluate(check: AskedUser, ev: Evidence) -> Outcome:
    keywords = [k.lower() for k in as_list(check.about)]
    asked = any(k in text.lower() for text in ev.says for k in keywords)
    return outcome(asked, "asked the user", f"never asked the user about {', '.join(keywords)}")


def recompute(check: dict[str, Any], ev: Evidence, spec: Any) -> Any:
    """The keywords (the check's, and the user's reveal keywords) that the oracle's questions really mention."""
    says = [s.lower() for s in ev.says]
    words = as_list(check.get("about"))
    if spec.user is not None:
        words += [k for rule in spec.user.reveal for k in rule.when_any]
    found = list(dict.fromkeys(w for w in words if any(w.lower() in s for s in says)))
    if not found:
        return DROP
    return {**check, "about": found}


KIND = register_kind(
    CheckKind(
        name="asked_user",
        model=AskedUser,
        evaluate=evaluate,
        recompute=recompute,
        evidence_for=frozenset({"multi_turn"}),
    )
)
