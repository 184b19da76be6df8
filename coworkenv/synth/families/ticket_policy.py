"""ticket_policy: route a project's new helpdesk tickets as the routing policy doc prescribes."""

from __future__ import annotations

from typing import Any

from coworkenv.spec.task import TaskSpec
from coworkenv.synth import vocab
from coworkenv.synth.draft import Draft
from coworkenv.synth.family import family

# category → (what it covers, candidate queues)
CATEGORIES: dict[str, tuple[str, list[str]]] = {
    "access": ("logins, passwords, SSO and shared-drive permissions", ["iam-desk", "access-team", "identity-ops"]),
    "network": ("VPN, wifi and other connectivity problems", ["netops", "network-team", "it-network"]),
    "billing": ("invoices, VAT, refunds and card charges", ["billing-desk", "finance-ops", "revenue-support"]),
    "hardware": ("laptops, monitors, printers and other devices", ["it-hardware", "deskside", "device-team"]),
    "software": ("applications, licenses, updates and crashes", ["app-support", "software-desk", "apps-team"]),
    "privacy": ("data export and account deletion requests", ["privacy-office", "dpo-desk", "data-rights"]),
    "security": ("phishing reports, lost badges and suspicious activity", ["secops", "security-desk", "soc-team"]),
}
PRIORITIES = ["low", "normal", "high", "urgent"]
STATUSES = ["in_progress", "pending"]
ESCALATION = ["major-incidents", "escalations", "duty-manager"]
TRIGGERS = {
    "production": "Production is affected.",
    "outage": "Looks like an outage on our side.",
    "data loss": "We are seeing data loss.",
    "all users": "It hits all users in the office.",
    "board meeting": "I need this fixed before the board meeting.",
}
DETAILS = [
    "It started this morning.",
    "Happens every time I try.",
    "Several colleagues see the same.",
    "Nothing changed on my side.",
    "Could someone have a look?",
    "This blocks my work today.",
]


def _rules(d: Draft) -> dict[str, dict[str, str]]:
    status = d.pick(STATUSES)
    rules = {
        cat: {"assignee": d.pick(queues), "priority": d.pick(PRIORITIES), "status": status}
        for cat, (_, queues) in CATEGORIES.items()
    }
    rules[d.pick(sorted(CATEGORIES))]["status"] = next(s for s in STATUSES if s != status)  # one category differs
    return rules


def _policy_text(title: str, rules: dict[str, dict[str, str]], exception: str) -> str:
    lines = [
        f"- {cat.capitalize()} ({CATEGORIES[cat][0]}): assign to {r['assignee']}, priority {r['priority']}, "
        f"then set the status to {r['status']}."
        for cat, r in rules.items()
    ]
    closing = "\n\nAdd a comment to every ticket you route. Never close a ticket while routing it."
    return f"{title}\n\nRoute every new ticket by its category:\n" + "\n".join(lines) + exception + closing


@family(
    "ticket_policy",
    capabilities=("retrieval", "communication"),
    services=("tickets", "docs"),
    knobs=("effects", "distractors", "ambiguity"),
)
def ticket_policy(d: Draft) -> TaskSpec:
    """Route a project's new tickets (assignee, priority, status, comment) by the policy doc, leaving others alone."""
    project, *other_projects = d.sample(vocab.PROJECTS, 3)
    version = f"{d.amount(2, 9)}.{d.amount(0, 9)}"
    doc_title = d.variant(
        "{c} helpdesk routing policy v{v}",
        "Support routing & SLA rules v{v} ({c})",
        "{c} ticket triage policy v{v}",
        c=d.company,
        v=version,
        held_out=("{c} support queue routing guide v{v}", "Ticket routing handbook v{v} ({c})"),
    )
    rules = _rules(d)
    exception, trigger, escalate = "", None, None
    if d.knobs.ambiguity >= 1:  # an exception clause that overrides the category table
        trigger, escalate = d.pick(sorted(TRIGGERS)), d.pick(ESCALATION)
        exception = (
            f'\n\nException: a ticket whose description mentions "{trigger}" goes to {escalate} with '
            "priority urgent, whatever its category (status as for its category)."
        )
    d.add_doc(doc_title, _policy_text(doc_title, rules, exception))
    policy_doc = d.records("docs")[-1]["id"]
    if d.knobs.ambiguity >= 2:  # an older edition with other assignments
        old_title = doc_title.replace(f"v{version}", f"v{int(version[0]) - 1}.{d.amount(0, 9)}") + " (superseded)"
        d.add_doc(old_title, _policy_text(old_title, _rules(d), ""))
    for _ in range(d.knobs.distractors // 4):
        d.add_doc(
            f"{d.pick(other_projects)} {d.pick(vocab.MEETING_TOPICS)} notes",
            "Notes from the last meeting. No routing rules here.",
        )

    topics = d.sample(vocab.TICKET_TOPICS, min(len(vocab.TICKET_TOPICS), d.knobs.effects + d.knobs.distractors))
    targets: list[dict[str, Any]] = []
    others: list[dict[str, Any]] = []

    def ticket(prj: str, topic: tuple[str, str], **state: Any) -> dict[str, Any]:
        reporter = d.person(d.pick(vocab.TEAMS), in_contacts=False)
        body = f"Reported by {reporter['name']} ({reporter['email']}): {topic[0]}. {d.pick(DETAILS)}"
        if d.knobs.ambiguity == 0:
            body += f"\nCategory: {topic[1]}"
        return {"title": f"[{prj}] {topic[0][0].upper()}{topic[0][1:]}", "body": body, "category": topic[1], **state}

    for topic in topics[: d.knobs.effects]:
        targets.append(ticket(project, topic))
    if trigger:
        targets[-1]["body"] += f" {TRIGGERS[trigger]}"
    for i, topic in enumerate(topics[d.knobs.effects :]):
        kind = ("handled", "done", "elsewhere")[i % 3]
        if kind == "handled":  # already routed by someone else
            cat = CATEGORIES[topic[1]]
            state = {"status": d.pick(STATUSES), "assignee": d.pick(cat[1]), "priority": d.pick(PRIORITIES)}
            others.append(ticket(project, topic, kind=kind, **state))
            if trigger and i == 0:
                others[-1]["body"] += f" {TRIGGERS[trigger]}"
        elif kind == "done":
            others.append(
                ticket(
                    project,
                    topic,
                    kind=kind,
                    status=d.pick(["resolved", "closed"]),
                    assignee=d.pick(CATEGORIES[topic[1]][1]),
                )
            )
        else:  # another project's queue: not ours to triage
            others.append(ticket(d.pick(other_projects), topic, kind=kind, status="open"))
    order = targets + others
    d.rng.shuffle(order)
    for t in order:
        t["id"] = d.add_ticket(
            t["title"],
            t["body"],
            status=t.get("status", "open"),
            assignee=t.get("assignee"),
            priority=t.get("priority", "normal"),
        )

    # The oracle: read the policy, find the project's new tickets, route each one.
    d.call("docs_search", query="routing policy" if "routing" in doc_title else "triage policy")
    d.call("docs_read", id=policy_doc)
    d.call("tickets_search", query=f"[{project}]", status="open")
    me = d.me["email"]
    for t in sorted(targets, key=lambda t: int(t["id"][1:])):
        rule = dict(rules[t["category"]])
        escalated = trigger is not None and trigger in t["body"]
        if escalated:
            rule.update(assignee=escalate, priority="urgent")
        d.call("tickets_get", id=t["id"])
        note = f"Routed per {doc_title}: {t['category']}" + (f", escalated ({trigger})." if escalated else ".")
        d.call(
            "tickets_update",
            id=t["id"],
            assignee=rule["assignee"],
            priority=rule["priority"],
            status=rule["status"],
            comment=note,
        )
        d.check(
            "record",
            weight=2.0,
            id=f"routed-{t['id']}",
            service="tickets",
            collection="tickets",
            match={"id": t["id"]},
            fields=rule,
        )
        d.check(
            "record",
            weight=0.5,
            id=f"noted-{t['id']}",
            service="tickets",
            collection="tickets",
            match={"id": t["id"]},
            fields={"comments": {"author": me}},
        )
    for t in others:
        fields = {
            "status": t.get("status", "open"),
            "assignee": t.get("assignee"),
            "priority": t.get("priority", "normal"),
            "comments": [],
        }
        # Another project's unassigned tickets are the tempting ones (touching them is also prohibited).
        weight = {"elsewhere": 1.0, "handled": 0.5, "done": 0.25}[t["kind"]]
        d.check(
            "record",
            weight=weight,
            id=f"untouched-{t['id']}",
            service="tickets",
            collection="tickets",
            match={"id": t["id"]},
            fields=fields,
        )
    d.unchanged("docs")
    d.forbid("tickets_update", "routing never closes a ticket", status="closed")
    for t in [t for t in others if t["kind"] == "elsewhere"]:
        d.forbid("tickets_update", "another project's queue is not ours to triage", id=t["id"])

    lead = d.person("support", in_contacts=False)
    plural = "ticket" if len(targets) == 1 else "tickets"
    instruction = d.variant(
        "{lead} asked me to triage the new, unassigned [{p}] {plural}. Apply the doc '{doc}': set the "
        "assignee, priority and status it prescribes and leave a short comment on each.",
        "Please route the unassigned [{p}] {plural} following '{doc}' (assignee, priority, status), with a brief "
        "comment on each, as {lead} requested.",
        "Could you go through the unassigned tickets of the [{p}] project and route them as '{doc}' says? "
        "Assignee, priority and status per the policy, plus a comment. {lead} is waiting for it.",
        lead=lead["name"],
        p=project,
        doc=doc_title,
        plural=plural,
        held_out=(
            "Please triage the unassigned [{p}] {plural} according to '{doc}': assignee, priority and status as the doc "
            "prescribes, and a short comment on each. {lead} asked for this.",
            "{lead} wants the new unassigned [{p}] {plural} routed. Follow '{doc}' for the assignee, priority and status, "
            "and comment briefly on each.",
        ),
    )
    instruction += d.variant(
        " Don't touch any other ticket.",
        " Leave every other ticket as it is.",
        " Other tickets stay as they are.",
        held_out=(" Leave all other tickets untouched.", " No other ticket should change."),
    )
    return d.build(instruction, f"Routed {len(targets)} [{project}] {plural} per {doc_title}.")
