"""ticket_chat_update: close the tickets customers confirmed as fixed, then report them in the team channel."""

from __future__ import annotations

from typing import Any

from coworkenv.spec.task import TaskSpec
from coworkenv.synth import vocab
from coworkenv.synth.draft import Draft
from coworkenv.synth.family import family

INTERNAL = ["support-team", "helpdesk-internal", "cs-internal", "support-leads", "triage-room"]
PUBLIC = ["customer-community", "public-support", "customers", "status-public"]
ASK = [
    "We shipped a fix, can you confirm it works now?",
    "Could you check again on your side?",
    "A patch went out last night. Please let us know if the problem is gone.",
]
CONFIRM_PLAIN = [
    "Confirmed: the issue is resolved on our side. You can close this ticket.",
    "Yes, it is fixed now. Please close the ticket.",
    "Resolved for us, thanks. Feel free to close it.",
]
CONFIRM_INDIRECT = [
    "All good now, thanks a lot. No need to keep this one around.",
    "Works again since this morning, we are done here.",
    "Problem gone after the patch. Thanks, nothing more needed from you.",
]
STILL_BROKEN = [
    "Still happening after the update, sorry.",
    "No, same error as before.",
    "Not fixed yet, it failed again today.",
]
RELAPSE = [
    "It's back again this morning, please keep this open.",
    "Spoke too soon: it broke again. Keep it open please.",
]
HUNCH = [
    "I think this is fixed now, waiting for the customer to confirm.",
    "Should be solved by the patch; no word from the customer yet.",
]


@family(
    "ticket_chat_update",
    capabilities=("communication",),
    services=("tickets", "chat"),
    knobs=("effects", "distractors", "ambiguity"),
)
def ticket_chat_update(d: Draft) -> TaskSpec:
    """Close a project's tickets that customers confirmed as fixed and post the closed ids in the internal channel."""
    project, *other_projects = d.sample(vocab.PROJECTS, 3)
    internal, public = d.pick(INTERNAL), d.pick(PUBLIC)
    agent = d.person("support", in_contacts=False)
    confirmations = CONFIRM_PLAIN if d.knobs.ambiguity == 0 else CONFIRM_PLAIN + CONFIRM_INDIRECT

    def ticket(prj: str, story: str, status: str) -> dict[str, Any]:
        """A ticket with a customer reporter and a comment thread telling `story`."""
        customer = d.outsider()
        topic = d.pick(vocab.TICKET_TOPICS)[0]
        day = -d.amount(3, 9)
        thread = [(agent["email"], d.pick(ASK), d.at(day + 1, d.amount(9, 12)))]
        if story in ("confirmed", "closed", "relapsed"):
            thread.append((customer["email"], d.pick(confirmations), d.at(day + 2, d.amount(9, 17))))
        if story == "broken":
            thread.append((customer["email"], d.pick(STILL_BROKEN), d.at(day + 2, d.amount(9, 17))))
        if story == "relapsed":
            thread.append((customer["email"], d.pick(RELAPSE), d.at(day + 3, d.amount(9, 17))))
        if story == "hunch":
            thread.append((agent["email"], d.pick(HUNCH), d.at(day + 2, d.amount(9, 17))))
        return {
            "title": f"[{prj}] {topic[0].upper()}{topic[1:]}",
            "status": status,
            "story": story,
            "body": f"Customer {customer['name']} ({customer['email']}) reports: {topic}.",
            "comments": [{"author": a, "text": t, "ts": ts} for a, t, ts in thread],
        }

    targets = [
        ticket(project, "confirmed", d.pick(["open", "pending", "in_progress", "resolved"]))
        for _ in range(d.knobs.effects)
    ]
    kinds = ["waiting", "broken", "closed", "elsewhere"] + (["relapsed", "hunch"] if d.knobs.ambiguity >= 2 else [])
    others = []
    for i in range(d.knobs.distractors):
        kind = kinds[i % len(kinds)]
        if kind == "closed":  # confirmed and closed long ago: nothing to do, not part of today's summary
            others.append(ticket(project, "closed", "closed"))
        elif kind == "elsewhere":  # another project's ticket, confirmed, but not ours
            others.append(ticket(d.pick(other_projects), "confirmed", d.pick(["pending", "resolved"])))
        else:
            others.append(ticket(project, kind, d.pick(["open", "pending", "in_progress"])))
    order = targets + others
    d.rng.shuffle(order)
    serial = d.amount(1000, 8000)  # four-digit ids: none is a substring of another, so text globs stay exact
    for t in order:
        t["id"] = d.add_ticket(t["title"], t["body"], status=t["status"], assignee=agent["email"])
        serial += d.amount(1, 40)
        t["id"] = d.records("tickets")[-1]["id"] = f"t{serial}"
        d.records("tickets")[-1]["comments"] = t["comments"]

    lead = d.person("support", in_contacts=False)
    d.add_chat(
        internal,
        lead["name"],
        f"Please post the [{project}] tickets you close here so we can update the weekly report.",
        d.at(-1, 9),
    )
    for _ in range(1 + d.knobs.distractors // 4):
        d.add_chat(
            public,
            d.outsider()["name"],
            f"Any news on the {project} issues? Several of us are waiting.",
            d.at(-1, d.amount(10, 17)),
        )
    d.add_chat(
        "general",
        lead["name"],
        d.pick(["Reminder: all-hands on Friday.", "Cake in the kitchen!", "New coffee machine on floor 2."]),
    )

    # The oracle: look at every ticket of the project, close the confirmed ones, then report them internally.
    d.call("tickets_search", query=f"[{project}]")
    for t in sorted(
        [t for t in order if t["title"].startswith(f"[{project}]") and t["status"] != "closed"], key=lambda t: t["id"]
    ):
        d.call("tickets_get", id=t["id"])
    done = sorted(targets, key=lambda t: t["id"])
    for t in done:
        d.call("tickets_update", id=t["id"], status="closed", comment="Closing: the customer confirmed the fix.")
        d.check(
            "record",
            weight=2.0,
            id=f"closed-{t['id']}",
            service="tickets",
            collection="tickets",
            match={"id": t["id"]},
            fields={"status": "closed"},
        )
    ids = ", ".join(t["id"] for t in done)
    d.call("chat_post", channel=internal, text=f"Closed [{project}] tickets confirmed fixed by customers: {ids}.")
    for t in done:
        d.check(
            "tool_called",
            weight=0.5,
            id=f"reported-{t['id']}",
            tool="chat_post",
            args={"channel": f"*{internal}", "text": f"*{t['id']}*"},
        )
    for t in others:
        # Closing a ticket the customer has not confirmed is as wrong as missing a confirmed one.
        weight = (
            1.0
            if t["title"].startswith(f"[{project}]") and t["status"] != "closed"
            else 0.5
            if t["status"] != "closed"
            else 0.25
        )
        d.check(
            "record",
            weight=weight,
            id=f"kept-{t['id']}",
            service="tickets",
            collection="tickets",
            match={"id": t["id"]},
            fields={"status": t["status"]},
        )
    for t in [t for t in others if t["story"] in ("closed", "relapsed", "hunch")][
        :2
    ]:  # look-alikes kept out of the summary
        d.check(
            "tool_called",
            weight=0.25,
            id=f"not-reported-{t['id']}",
            tool="chat_post",
            args={"channel": f"*{internal}", "text": f"*{t['id']}*"},
            min=0,
            max=0,
        )
    d.allow("chat_read")
    d.forbid("chat_post", "internal ticket summaries must not go to a customer-facing channel", channel=f"*{public}")
    for t in [t for t in others if t["story"] in ("broken", "relapsed")]:
        d.forbid("tickets_update", "the customer said the problem persists", id=t["id"], status="closed")

    plural = "ticket" if len(targets) == 1 else "tickets"
    instruction = d.variant(
        "Close the [{p}] tickets where the customer has confirmed in the comments that the problem is solved, then "
        "post the ids of the tickets you closed in #{ch} for {lead}.",
        "Some [{p}] tickets have been confirmed as fixed by their customers (see the comments). Close those and list "
        "their ticket ids in a message to #{ch}; {lead} is collecting them.",
        "{lead} wants a tidy [{p}] queue: close every ticket whose customer confirmed the fix in the comments, and "
        "post a summary with the closed ticket ids to #{ch}.",
        p=project,
        ch=internal,
        lead=lead["name"],
        held_out=(
            "In the [{p}] project, close each ticket whose customer confirmed in the comments that it's resolved, and then "
            "post the closed ticket ids to #{ch} for {lead}.",
            "{lead} is gathering the [{p}] tickets that customers have confirmed as fixed in the comments. Close those "
            "tickets and send their ids to #{ch}.",
        ),
    )
    instruction += d.variant(
        " Customer-facing channels are off limits.",
        " Nothing goes to public channels.",
        "",
        held_out=(" Stay out of customer-facing channels.", " Don't post in any public channel.", ""),
    )
    return d.build(instruction, f"Closed {len(done)} [{project}] {plural} ({ids}) and posted them in #{internal}.")
