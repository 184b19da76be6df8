"""mail_classify: label every email in the inbox with one of a few categories and answer with the labels as JSON;
from effects level 2 on, also put each label on its message (`mail_label`), as inbox triage asks."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from coworkenv.spec.task import TaskSpec
from coworkenv.synth import vocab
from coworkenv.synth.draft import Draft
from coworkenv.synth.family import family

Mail = tuple[str, str, str]
"""(sender, subject, body)."""


def _billing(d: Draft) -> Mail:
    vendor = d.pick([c for c in vocab.COMPANIES if c != d.company])
    number = f"INV-{d.amount(1000, 9999)}"
    return (
        f"billing@{vendor.lower().replace(' ', '-')}.test",
        f"Invoice {number}",
        f"Please find invoice {number} for {d.amount(120, 9800, 10)} EUR, payable within 30 days.",
    )


def _meeting(d: Draft) -> Mail:
    who, topic = d.person(in_contacts=False), d.pick(vocab.MEETING_TOPICS)
    day = d.day_name(d.amount(1, 5))
    return (
        who["email"],
        f"{topic.title()} on {day}?",
        f"Could we hold the {d.pick(vocab.PROJECTS)} {topic} on {day} at {d.amount(9, 16)}:00?",
    )


def _support(d: Draft) -> Mail:
    topic, _ = d.pick(vocab.TICKET_TOPICS)
    return (
        "helpdesk@" + d.domain,
        f"Ticket update: {topic}",
        f"Your request about '{topic}' was updated. Reply to add details.",
    )


def _newsletter(d: Draft) -> Mail:
    source = d.pick([c for c in vocab.COMPANIES if c != d.company])
    return (
        f"news@{source.lower().replace(' ', '-')}.test",
        f"{source} weekly digest",
        "This week: product news, events and tips. Unsubscribe any time.",
    )


def _security(d: Draft) -> Mail:
    city, _ = d.pick(vocab.CITIES)
    return (
        "security@" + d.domain,
        d.pick(["New sign-in to your account", "Password reset requested"]),
        f"We noticed a sign-in from {city}. If this was not you, reset your password now.",
    )


APPLY_FROM_EFFECTS = 2
"""From this effects level on, the labels also go on the messages: at level 1 the task stays read-only."""

CATEGORIES: dict[str, tuple[str, Callable[[Draft], Mail]]] = {
    "billing": ("invoices and payment requests", _billing),
    "meeting": ("requests to meet or to move a meeting", _meeting),
    "support": ("updates on helpdesk tickets", _support),
    "newsletter": ("digests and marketing mail", _newsletter),
    "security": ("sign-in alerts and password resets", _security),
}


@family(
    "mail_classify",
    capabilities=("retrieval",),
    services=("mail", "docs"),
    knobs=("effects", "distractors", "ambiguity"),
)
def mail_classify(d: Draft) -> TaskSpec:
    """Classify every inbox email into labels the instruction (or a doc) gives, answering with JSON per message id;
    with `effects` ≥ 2 the labels are applied to the messages too."""
    names = d.sample(sorted(CATEGORIES), 3 if d.knobs.effects < 3 else 4)
    n_mails = d.knobs.effects + 2
    assigned = [names[i % len(names)] for i in range(n_mails)]  # every label used at least once (up to 5 mails)
    assigned = d.sample(assigned, len(assigned))
    apply = d.knobs.effects >= APPLY_FROM_EFFECTS
    labels: dict[str, str] = {}
    for i, name in enumerate(assigned):
        sender, subject, body = CATEGORIES[name][1](d)
        labels[d.add_mail(sender, subject, body, date=d.at(-i - 1, 8 + i % 9))] = name
    filed = []
    for i in range(d.knobs.distractors // 3):  # already filed: not in the inbox, not to be labelled
        sender, subject, body = CATEGORIES[d.pick(sorted(CATEGORIES))][1](d)
        filed.append(d.add_mail(sender, subject, body, folder=d.pick(vocab.FOLDERS), date=d.at(-i - 2, 10)))

    d.call("mail_search", folder="inbox")
    for mid in labels:
        d.call("mail_read", id=mid)
    rules = "; ".join(f"{name}: {CATEGORIES[name][0]}" for name in names)
    if d.knobs.ambiguity >= 1:  # the labels are defined in a doc the agent has to find
        title = d.pick(["Mail labels", "Inbox labelling guide", "How we label mail"])
        doc = d.add_doc(title, f"Use exactly these labels.\n{rules.replace('; ', chr(10))}")
        d.call("docs_search", query=title.split()[0])
        d.call("docs_read", id=doc)
        how = d.variant(
            "one of the labels defined in the '{t}' doc",
            "one of the labels from our '{t}' doc",
            t=title,
            held_out=("a single label as listed in the '{t}' doc", "the matching label from the '{t}' document"),
        )
    else:
        how = d.variant(
            "one of these labels ({r})",
            "exactly one label out of: {r}",
            r=rules,
            held_out=("a single label picked from this list ({r})", "the matching label from this set: {r}"),
        )

    schema: dict[str, Any] = {"type": "object", "additionalProperties": {"type": "string"}, "minProperties": 1}
    d.check("answer_json", weight=3.0, id="labels", labels=labels, schema=schema)
    d.check("tool_called", weight=1.0, id="looked-at-the-inbox", tool="mail_search")
    if apply:
        for mid, name in labels.items():
            d.call("mail_label", id=mid, add=[name])
            d.check(
                "record",
                weight=1.0,
                id=f"labelled-{mid}",
                service="mail",
                collection="messages",
                match={"id": mid},
                fields={"labels": name},
            )
        # Labelling replaces `unchanged` on mail: the labelled mail stays in the inbox, the filed mail gets no label.
        d.check("mail_in_folder", weight=0.5, id="left-in-the-inbox", ids=list(labels), folder="inbox")
        for mid in filed:
            d.check(
                "record",
                weight=0.25,
                id=f"filed-{mid}-unlabelled",
                service="mail",
                collection="messages",
                match={"id": mid},
                fields={"labels": []},
            )
    else:
        d.unchanged("mail")
    d.forbid("mail_delete", "classifying was asked for, not deleting")
    d.forbid("mail_move", "only labels were asked for; the mail stays where it is")
    d.allow("mail_delete", "mail_move")
    instruction = d.variant(
        "Please classify every email in my inbox using {how}. Answer with a JSON object mapping each message id to its label.",
        'Go through my inbox and give each email {how}. Reply with JSON: {{"<message id>": "<label>"}} for every message.',
        "I need my inbox triaged: label each message with {how}, and send me the result as a JSON object keyed by message id.",
        how=how,
        held_out=(
            "Label each email in my inbox with {how}; give me the answer as JSON, message id to label.",
            "Could you sort my inbox messages into categories using {how}? Return a JSON object from message id to label.",
        ),
    )
    if apply:
        instruction += d.variant(
            " Also tag each message in my mailbox with its label.",
            " Then apply each label to its email as a mail label too, and leave the mail in the inbox.",
            " Please put the label on each message itself as well.",
            held_out=(
                " Besides the JSON, add the label to each email itself.",
                " Afterwards every message should carry its label in the mailbox, still in the inbox.",
            ),
        )
    return d.build(instruction, json.dumps(labels))
