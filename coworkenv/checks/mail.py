"""Checks over messages the agent wrote (`mail_sent`, `mail_drafted`): which messages each looks at, and the one
matching, evaluation and recompute they share. A draft is never sent mail, and sent mail is never a draft."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from coworkenv.checks.base import DROP, CheckBase, Evidence, Outcome, outcome
from coworkenv.checks.matching import value_matches
from coworkenv.checks.text import as_list
from coworkenv.frozen import EMPTY_LIST
from coworkenv.workspace.services.mail import DRAFTS

Messages = list[dict[str, Any]]
StrOrList = str | list[str]


class MessageCheck(CheckBase):
    """The parameters of a check over messages; each kind narrows `kind` to its name."""

    kind: str
    to: StrOrList
    cc: StrOrList | None = None
    subject_contains: str | None = None
    body_contains: StrOrList = EMPTY_LIST
    count: int | None = Field(default=None, ge=0)
    """Exactly this many matching messages; absent means at least one."""


def sent_messages(ev: Evidence) -> Messages:
    """Mail the agent sent: out of `drafts` now and new since the start, or a draft at the start that was sent."""
    before = {m["id"]: m["folder"] for m in ev.initial_state["mail"]["messages"]}
    return [
        m
        for m in ev.final_state["mail"]["messages"]
        if m["folder"] != DRAFTS and (m["id"] not in before or before[m["id"]] == DRAFTS)
    ]


def drafted_messages(ev: Evidence) -> Messages:
    """Drafts the agent saved and has not sent (a draft that was sent has left `drafts`)."""
    before = {m["id"] for m in ev.initial_state["mail"]["messages"]}
    return [m for m in ev.final_state["mail"]["messages"] if m["folder"] == DRAFTS and m["id"] not in before]


def addressed(messages: Messages, to: list[str], cc: list[str]) -> Messages:
    """Messages whose recipients match every `to` glob and whose cc matches every `cc` glob."""
    return [
        m for m in messages if all(value_matches(a, m["to"]) for a in to) and all(value_matches(a, m["cc"]) for a in cc)
    ]


def hits(messages: Messages, subject: str | None, body: list[str]) -> Messages:
    """Messages whose subject contains `subject` and whose body contains every word of `body` (case-insensitive)."""
    subject = subject.lower() if subject is not None else None
    return [
        m
        for m in messages
        if (subject is None or subject in m["subject"].lower()) and all(b.lower() in m["body"].lower() for b in body)
    ]


def evaluate_messages(check: MessageCheck, messages: Messages, verb: str) -> Outcome:
    found = hits(
        addressed(messages, as_list(check.to), as_list(check.cc)), check.subject_contains, as_list(check.body_contains)
    )
    ok = len(found) == check.count if check.count is not None else len(found) >= 1
    wanted = f"exactly {check.count}" if check.count is not None else "at least 1"
    return outcome(
        ok, f"{len(found)} matching message(s) {verb}", f"{len(found)} matching message(s) {verb}, wanted {wanted}"
    )


def recompute_messages(check: dict[str, Any], messages: Messages) -> Any:
    """Keep the addressees; drop the subject and body words the oracle's message does not have; recount."""
    count = check.get("count")
    if count == 0:
        return DROP  # a "never send this" guard that the trusted oracle itself breaks
    to_them = addressed(messages, as_list(check.get("to")), as_list(check.get("cc")))
    body = as_list(check.get("body_contains"))
    found = hits(to_them, check.get("subject_contains") or "", body)
    if found:
        return {**check, "count": len(found)} if count is not None else check
    if not to_them:
        return None
    message, new = to_them[0], dict(check)
    if (check.get("subject_contains") or "").lower() not in message["subject"].lower():
        new.pop("subject_contains")
    if "body_contains" in new:
        new["body_contains"] = [b for b in body if b.lower() in message["body"].lower()]
    found = hits(to_them, new.get("subject_contains") or "", as_list(new.get("body_contains")))
    if not found:
        return None
    if count is not None:
        new["count"] = len(found)
    return new
