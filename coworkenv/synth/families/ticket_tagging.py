"""ticket_tagging: tag, categorize and prioritize the untagged open tickets as the tagging guide says, by the
customer's tier and what the ticket is about; tickets already tagged, and closed ones, stay as they are."""

from __future__ import annotations

from typing import Any

from coworkenv.spec.task import TaskSpec
from coworkenv.synth import vocab
from coworkenv.synth.draft import Draft
from coworkenv.synth.families.ticket_policy import CATEGORIES, DETAILS
from coworkenv.synth.family import family

TIER_TAGS = [
    ("enterprise", "business", "standard"),
    ("gold", "silver", "bronze"),
    ("tier-1", "tier-2", "tier-3"),
    ("vip", "priority", "regular"),
]
PRIORITIES = [
    ("P1", "P2", "P3"),
    ("urgent", "high", "normal"),
    ("sev1", "sev2", "sev3"),
    ("critical", "major", "minor"),
]


def _guide(title: str, tiers: list[tuple[str, str, list[str]]], other: tuple[str, str]) -> str:
    lines = [f"- {', '.join(names)}: tag `{tag}`, priority {prio}." for tag, prio, names in tiers]
    lines.append(f"- Every other customer: tag `{other[0]}`, priority {other[1]}.")
    cats = [f"- {cat}: {what}" for cat, (what, _) in CATEGORIES.items()]
    return (
        f"{title}\n\nEvery new ticket gets its customer's tier tag and that tier's priority:\n"
        + "\n".join(lines)
        + "\n\nSet the category to one of:\n"
        + "\n".join(cats)
        + "\n\nTickets that already carry tags are done."
    )


@family(
    "ticket_tagging",
    capabilities=("retrieval", "authoring"),
    services=("tickets", "docs"),
    knobs=("effects", "distractors", "ambiguity"),
)
def ticket_tagging(d: Draft) -> TaskSpec:
    """Tag each untagged open ticket with its customer's tier, and set the tier's priority and the ticket's category."""
    tags, prios = d.pick(TIER_TAGS), d.pick(PRIORITIES)
    companies = d.sample([c for c in vocab.COMPANIES if c != d.company], 8)
    tiers = [(tags[0], prios[0], companies[0:2]), (tags[1], prios[1], companies[2:4])]
    tier_of = {name: (tag, prio) for tag, prio, names in tiers for name in names}
    tier_of |= {name: (tags[2], prios[2]) for name in companies[4:]}
    version = f"{d.amount(2, 9)}.{d.amount(0, 9)}"
    # Not a `variant`: the title is a name in the workspace, the same in both splits.
    title = d.pick(
        ["{c} support tagging guide v{v}", "Ticket tagging rules v{v} ({c})", "{c} helpdesk tagging guide v{v}"]
    )
    title = title.format(c=d.company, v=version)
    d.add_doc(title, _guide(title, tiers, (tags[2], prios[2])))
    guide = d.records("docs")[-1]["id"]
    if d.knobs.ambiguity >= 2:  # an older edition that ranks the customers the other way round
        old = title.replace(f"v{version}", f"v{int(version[0]) - 1}.{d.amount(0, 9)}") + " (superseded)"
        d.add_doc(
            old,
            _guide(
                old, [(tags[0], prios[0], companies[2:4]), (tags[1], prios[1], companies[0:2])], (tags[2], prios[2])
            ),
        )

    topics = d.sample(vocab.TICKET_TOPICS, min(len(vocab.TICKET_TOPICS), d.knobs.effects + d.knobs.distractors))
    targets: list[dict[str, Any]] = []
    others: list[dict[str, Any]] = []

    def ticket(topic: tuple[str, str], customer: str, **state: Any) -> dict[str, Any]:
        reporter = d.outsider()
        named = d.knobs.ambiguity == 0 or d.chance(0.5)  # else only the body says who the customer is
        body = f"Reported by {reporter['name']} ({customer}): {topic[0]}. {d.pick(DETAILS)}"
        if d.knobs.ambiguity == 0:
            body += f"\nCategory: {topic[1]}"
        return {
            "title": f"{topic[0][0].upper()}{topic[0][1:]}",
            "body": body,
            "category": topic[1],
            "customer": customer,
            "named": named,
            **state,
        }

    for i, topic in enumerate(topics[: d.knobs.effects]):
        # every tier among the first three targets, then any
        targets.append(ticket(topic, companies[(0, 2, 4)[i]] if i < 3 else d.pick(companies)))
    for i, topic in enumerate(topics[d.knobs.effects :]):
        customer = d.pick(companies)
        if i % 2 == 0:  # already tagged by someone else (maybe not as the guide says today): done
            tag, prio = d.pick([tier_of[customer], (tags[2], prios[2])])
            others.append(ticket(topic, customer, tags=[tag], priority=prio, category_set=topic[1]))
        else:  # closed before tagging existed
            others.append(ticket(topic, customer, status=d.pick(["resolved", "closed"])))
    order = targets + others
    d.rng.shuffle(order)
    for t in order:
        t["id"] = d.add_ticket(
            t["title"],
            t["body"],
            status=t.get("status", "open"),
            priority=t.get("priority", "normal"),
            tags=t.get("tags", ()),
            category=t.get("category_set", ""),
            customer=t["customer"] if t["named"] else "",
        )

    # The oracle: read the guide, list the open tickets, tag and update each untagged one.
    d.call("docs_search", query="tagging")
    d.call("docs_read", id=guide)
    d.call("tickets_search", query="", status="open")
    for t in sorted(targets, key=lambda t: int(t["id"][1:])):
        tag, prio = tier_of[t["customer"]]
        d.call("tickets_get", id=t["id"])
        d.call("tickets_tag", id=t["id"], add=[tag])
        d.call("tickets_update", id=t["id"], priority=prio, category=t["category"])
        d.check(
            "record",
            weight=1.5,
            id=f"tier-{t['id']}",
            service="tickets",
            collection="tickets",
            match={"id": t["id"]},
            fields={"tags": tag, "priority": prio},
        )
        d.check(
            "record",
            weight=1.0,
            id=f"category-{t['id']}",
            service="tickets",
            collection="tickets",
            match={"id": t["id"]},
            fields={"category": t["category"]},
        )
    for t in others:
        fields = {
            "tags": t.get("tags", []),
            "priority": t.get("priority", "normal"),
            "category": t.get("category_set", ""),
        }
        d.check(
            "record",
            weight=0.25,
            id=f"untouched-{t['id']}",
            service="tickets",
            collection="tickets",
            match={"id": t["id"]},
            fields=fields,
        )
    d.unchanged("docs")
    d.forbid("tickets_update", "tagging never closes a ticket", status="closed")

    plural = "ticket" if len(targets) == 1 else "tickets"
    instruction = d.variant(
        "Please go through the open tickets that have no tags yet and apply '{doc}': the customer's tier tag, the "
        "tier's priority and the right category on each.",
        "Tag the untagged open tickets following '{doc}' - tier tag and priority from the customer, plus a category.",
        "Could you triage the open tickets nobody has tagged? '{doc}' says which tag and priority each customer gets "
        "and which categories exist.",
        doc=title,
        held_out=(
            "Use '{doc}' on every open ticket still without tags: tag it with its customer's tier, give it that tier's "
            "priority and set its category.",
            "Apply the rules of '{doc}' to the open, untagged tickets (tier tag, priority, category per ticket).",
        ),
    )
    instruction += d.variant(
        " Leave tagged and closed tickets alone.",
        " Tickets that already have tags, and closed ones, stay as they are.",
        held_out=(
            " Do not touch tickets that are tagged or closed.",
            " Closed or already-tagged tickets are out of scope.",
        ),
    )
    return d.build(instruction, f"Tagged and categorized {len(targets)} {plural} per {title}.")
