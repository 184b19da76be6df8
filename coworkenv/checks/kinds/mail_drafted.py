"""`mail_drafted`: drafts the agent saved and did not send, to these addressees, with subject and body words."""

from __future__ import annotations

from typing import Any, Literal

from coworkenv.checks.base import CheckKind, Evidence, Outcome, register_kind
from coworkenv.checks.mail import MessageCheck, drafted_messages, evaluate_messages, recompute_messages


class MailDrafted(MessageCheck):
    kind: Literal["mail_drafted"]


def evaluate(check: MailDrafted, ev: Evidence) -> Outcome:
    return evaluate_messages(check, drafted_messages(ev), "drafted")


def recompute(check: dict[str, Any], ev: Evidence, spec: Any) -> Any:
    """Keep the addressees; drop the subject and body words the oracle's draft does not have; recount."""
    return recompute_messages(check, drafted_messages(ev))


KIND = register_kind(CheckKind(name="mail_drafted", model=MailDrafted, evaluate=evaluate, recompute=recompute))
