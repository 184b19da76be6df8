"""flaky_inbox: acknowledge a customer's messages, escalate one to a colleague and file them, while mail fails now and then."""

from __future__ import annotations

from coworkenv.spec.task import TaskSpec
from coworkenv.synth import vocab
from coworkenv.synth.draft import Draft
from coworkenv.synth.family import family

ISSUES = [
    "delivery is late",
    "invoice amount looks wrong",
    "item arrived damaged",
    "need a copy of the receipt",
    "want to change the shipping address",
    "tracking link does not work",
    "package is missing an item",
]
ESCALATIONS = ["refund request", "chargeback warning", "legal complaint", "cancellation request"]


@family(
    "flaky_inbox",
    capabilities=("robustness", "communication"),
    services=("mail", "contacts"),
    knobs=("effects", "distractors", "ambiguity", "fault_rate"),
)
def flaky_inbox(d: Draft) -> TaskSpec:
    """Reply to each of a customer's messages quoting its order number, forward the escalation, file them; 429/500 faults."""
    d.fault_rate = d.knobs.fault_rate
    customer = d.pick([c for c in vocab.COMPANIES if c != d.company])
    cdomain = f"{customer.lower().replace(' ', '')}.test"  # "Blue Sun" → bluesun.test, as Draft does
    folder = d.pick(["handled", "done", "answered", "customers"])
    escalate = d.knobs.effects >= 2
    n = d.knobs.effects  # replies; from two on, the last one is an escalation to forward as well
    codes = [f"{d.pick(['ORD', 'PO', 'SO'])}-{serial}" for serial in d.sample(range(10000, 99999), n + 2)]
    colleague_team = d.pick(["finance", "legal", "support"])
    colleague = d.person(colleague_team)
    for _ in range(d.knobs.distractors // 2):
        d.person()
    if d.knobs.ambiguity >= 1:  # same title, other team: "in <team>" decides
        d.person(d.pick([t for t in vocab.TEAMS if t != colleague_team]))
        d.records("contacts")[-1]["title"] = colleague["title"]
    for p in d.records("contacts"):  # exactly one "<title> in <team>", so the indirect reference is unambiguous
        if p["id"] != colleague["id"] and p["team"] == colleague_team and p["title"] == colleague["title"]:
            p["title"] = d.pick([t for t in vocab.ROLES[colleague_team] if t != colleague["title"]])
    d.rng.shuffle(d.records("contacts"))

    # --- the customer's messages, with look-alikes -------------------------------------------------------------
    writers = [f"{d.pick(vocab.FIRST_NAMES)}.{d.pick(vocab.LAST_NAMES)}@{cdomain}".lower() for _ in range(n)]
    issues = [d.pick(ISSUES) for _ in range(n)]
    escalation = d.pick(ESCALATIONS)
    if escalate:
        issues[-1] = escalation
    todo = []
    for i in range(n):
        subject = f"Order {codes[i]}: {issues[i]}"
        body = f"Hello,\nabout order {codes[i]}: {issues[i]}. Please get back to me.\nRegards, {writers[i].split('.')[0].title()}"
        todo.append(
            (d.add_mail(writers[i], subject, body, date=d.at(-1 - i % 3, 9 + i)), writers[i], subject, codes[i])
        )
    keep_inbox, answered = [], None
    if d.knobs.ambiguity >= 2:  # already answered (in the folder) and another company's look-alike: leave both alone
        subject = f"Order {codes[n]}: {d.pick(ISSUES)}"
        answered = d.add_mail(
            f"ops@{cdomain}", subject, "Thanks for the quick answer!", folder=folder, date=d.at(-6, 10)
        )
        other = d.pick([c for c in vocab.COMPANIES if c not in (customer, d.company)])
        other_domain = f"{other.lower().replace(' ', '')}.test"
        keep_inbox.append(
            d.add_mail(
                f"orders@{other_domain}", f"Order {codes[n + 1]}: {d.pick(ISSUES)}", "Please advise.", date=d.at(-1, 12)
            )
        )
    for i in range(d.knobs.distractors):
        sender = d.person(in_contacts=False)
        keep_inbox.append(
            d.add_mail(
                sender["email"],
                d.pick(["Team lunch", f"{d.pick(vocab.PROJECTS)} notes", "Re: holidays", "Parking"]),
                "FYI.",
                date=d.at(-1 - i % 4, 8 + i % 9),
            )
        )

    d.rng.shuffle(d.records("mail"))
    renumber = {
        m["id"]: f"m{i + 1}" for i, m in enumerate(d.records("mail"))
    }  # so the customer's mail is not simply m1..mn
    for m in d.records("mail"):
        m["id"] = renumber[m["id"]]
    todo = [(renumber[mid], *rest) for mid, *rest in todo]
    keep_inbox = [renumber[mid] for mid in keep_inbox]

    # --- oracle ------------------------------------------------------------------------------------------------
    if escalate:
        d.call(
            "contacts_search",
            query=f"{colleague['title']} {colleague_team}" if d.knobs.ambiguity >= 1 else colleague["name"],
        )
    d.call("mail_search", query=cdomain, folder="inbox")
    for mid, writer, _subject, code in todo:
        d.call("mail_read", id=mid)
        reply = f"Hello,\nthanks for your message about order {code}. We are on it and will follow up shortly.\n{d.me['name']}"
        d.call("mail_reply", id=mid, body=reply)
        d.check(
            "mail_sent", weight=1.5, id=f"replied-{code}", to=writer, body_contains=[code], count=1
        )  # one reply, not one per retry
    if escalate:
        mid, writer, subject, code = todo[-1]
        d.call(
            "mail_send",
            to=colleague["email"],
            subject=f"Fwd: {subject}",
            body=f"Escalating the {escalation} for order {code} from {writer}.",
        )
        d.check("mail_sent", weight=1.5, id="escalated", to=colleague["email"], body_contains=[code])
    for mid, *_ in todo:
        d.call("mail_move", id=mid, folder=folder)
    d.check("mail_in_folder", weight=1.0, id="filed", ids=[mid for mid, *_ in todo], folder=folder)
    if keep_inbox:
        d.check("mail_in_folder", weight=0.5, id="others-in-inbox", ids=keep_inbox, folder="inbox")
    if answered:
        d.check("mail_sent", weight=0.5, id="no-double-answer", to=f"ops@{cdomain}", count=0)

    # --- instruction -------------------------------------------------------------------------------------------
    who = (
        f"{colleague['name']} ({colleague['email']})"
        if d.knobs.ambiguity == 0
        else f"our {colleague['title']} in {colleague_team}"
    )
    scope = (
        f"every message from {customer} (@{cdomain})"
        if d.knobs.ambiguity < 2
        else f"every unanswered {customer} message in my inbox"
    )
    instruction = d.variant(
        "Please reply to {scope} with a short acknowledgement that quotes the order number, then move them to '{folder}'.",
        "Acknowledge {scope}: one reply each, mentioning the order number. File them under '{folder}' afterwards.",
        "Go through {scope}, answer each with a quick note that includes its order number, and move them into '{folder}'.",
        scope=scope,
        folder=folder,
        held_out=(
            "For {scope}, send a brief reply acknowledging it and quoting the order number, then file each one in '{folder}'.",
            "Could you answer {scope} with a quick acknowledgement (include the order number in each) and then move them to '{folder}'?",
            "I need {scope} acknowledged - one short reply per message that cites its order number - and afterwards moved to '{folder}'.",
        ),
    )
    if escalate:
        instruction += f" The {escalation} also needs to be forwarded to {who}."
    account_owner = d.person(in_contacts=False)["name"].split()[0]
    context = d.variant(
        "{c} is {o}'s account, so keep it friendly.",
        "{o} asked me to look after {c} this week.",
        "{c} buys {p} from us and {o} wants quick answers.",
        "Covering for {o} on the {c} account.",
        c=customer,
        o=account_owner,
        p=d.pick(vocab.PRODUCTS),
        held_out=(
            "I'm minding the {c} account while {o} is out.",
            "{o} normally handles {c}, but it's on me this week.",
            "{c} is one of {o}'s customers; they buy {p} from us.",
        ),
    )
    flaky = d.pick(
        ["", "Mail has been flaky all morning, so retry if a call fails.", "The mail server keeps timing out today."]
    )
    signature = d.pick(["", f"Thanks, {d.me['name'].split()[0]}", f"- {d.me['name'].split()[0]}"])
    instruction = " ".join(p for p in (context, instruction, flaky, signature) if p)
    plural = "message" if n == 1 else "messages"
    extra = f", forwarded the {escalation} to {colleague['name']}" if escalate else ""
    return d.build(instruction, f"Replied to {n} {customer} {plural}{extra} and moved them to '{folder}'.")
