"""`mail_sent`: messages the agent sent (new since the start) to these addressees, with subject and body words."""

from __future__ import annotations

from typing import Any, Literal

from coworkenv.checks.base import CheckKind, Evidence, Outcome, register_kind
from coworkenv.checks.mail import MessageCheck, evaluate_messages, recompute_messages, sent_messages


class MailSent(MessageCheck):
    kind: Literal["mail_sent"]


def evaluate(check: MailSent, ev: Evidence) -> Outcome:
    return evaluate_messages(check, sent_messages(ev), "sent")


def recompute(check: dict[str, Any], ev: Evidence, spec: Any) -> Any:
    """Keep the addressees; drop the subject and body words the oracle's message does not have; recount."""
    return recompute_messages(check, sent_messages(ev))


KIND = register_kind(CheckKind(name="mail_sent", model=MailSent, evaluate=evaluate, recompute=recompute))
