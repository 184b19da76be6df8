"""`mail_sent`: messages the agent sent (new since the start) to these addressees, with subject and body words."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from coworkenv.checks.base import DROP, CheckBase, CheckKind, Evidence, Outcome, outcome, register_kind
from coworkenv.checks.matching import value_matches
from coworkenv.checks.text import as_list

StrOrList = str | list[str]


class MailSent(CheckBase):
    kind: Literal["mail_sent"]
    to: StrOrList
    cc: StrOrList | None = None
    subject_contains: str | None = None
    body_contains: StrOrList = []
    count: int | None = Field(default=None, ge=0)
    """Exactly this many matching messages; absent means at least one."""


def sent_messages(ev: Evidence) -> list[dict[str, Any]]:
    before = {m["id"] for m in ev.initial_state["mail"]["messages"]}
    return [m for m in ev.final_state["mail"]["messages"] if m["id"] not in before]


def _addressed(to: list[str], cc: list[str], ev: Evidence) -> list[dict[str, Any]]:
    return [m for m in sent_messages(ev) if all(value_matches(a, m["to"]) for a in to) and all(value_matches(a, m["cc"]) for a in cc)]


def _hits(messages: list[dict[str, Any]], subject: str | None, body: list[str]) -> list[dict[str, Any]]:
    subject = subject.lower() if subject is not None else None
    return [
        m for m in messages
        if (subject is None or subject in m["subject"].lower()) and all(b.lower() in m["body"].lower() for b in body)
    ]  # fmt: skip


def evaluate(check: MailSent, ev: Evidence) -> Outcome:
    hits = _hits(_addressed(as_list(check.to), as_list(check.cc), ev), check.subject_contains, as_list(check.body_contains))
    ok = len(hits) == check.count if check.count is not None else len(hits) >= 1
    wanted = f"exactly {check.count}" if check.count is not None else "at least 1"
    return outcome(ok, f"{len(hits)} matching message(s) sent", f"{len(hits)} matching message(s) sent, wanted {wanted}")


def recompute(check: dict[str, Any], ev: Evidence, spec: Any) -> Any:
    """Keep the addressees; drop the subject and body words the oracle's message does not have; recount."""
    count = check.get("count")
    if count == 0:
        return DROP  # a "never send this" guard that the trusted oracle itself breaks
    addressed = _addressed(as_list(check.get("to")), as_list(check.get("cc")), ev)
    body = as_list(check.get("body_contains"))
    hits = _hits(addressed, check.get("subject_contains") or "", body)
    if hits:
        return {**check, "count": len(hits)} if count is not None else check
    if not addressed:
        return None
    message, new = addressed[0], dict(check)
    if (check.get("subject_contains") or "").lower() not in message["subject"].lower():
        new.pop("subject_contains")
    if "body_contains" in new:
        new["body_contains"] = [b for b in body if b.lower() in message["body"].lower()]
    hits = _hits(addressed, new.get("subject_contains") or "", as_list(new.get("body_contains")))
    if not hits:
        return None
    if count is not None:
        new["count"] = len(hits)
    return new


KIND = register_kind(CheckKind(name="mail_sent", model=MailSent, evaluate=evaluate, recompute=recompute))
