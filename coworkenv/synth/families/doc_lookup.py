"""doc_lookup: find facts (limits, codes, contacts) in the right policy doc, skip superseded versions, summarise."""

from __future__ import annotations

from typing import Any

from coworkenv.spec.task import TaskSpec
from coworkenv.synth import vocab
from coworkenv.synth.draft import Draft
from coworkenv.synth.family import family

# topic → (code prefix, contact team, numeric facts: (label in the doc, direct ask, indirect ask, unit, lo, hi, step))
POLICIES: dict[str, tuple[str, str, list[tuple[str, str, str, str, int, int, int]]]] = {
    "Travel": (
        "TRV",
        "operations",
        [
            (
                "Hotel cap per night",
                "the nightly hotel cap",
                "how much a hotel night may cost at most",
                "EUR",
                110,
                290,
                10,
            ),
            (
                "Daily meal allowance",
                "the daily meal allowance",
                "how much I can spend on food per travel day",
                "EUR",
                25,
                90,
                5,
            ),
            (
                "Flight pre-approval threshold",
                "the flight pre-approval threshold",
                "above what fare a flight needs approval first",
                "EUR",
                300,
                1500,
                50,
            ),
            (
                "Mileage rate",
                "the mileage rate in cents per km",
                "how many cents per kilometre I get for driving my own car",
                "cents/km",
                19,
                45,
                1,
            ),
        ],
    ),
    "Expense": (
        "EXP",
        "finance",
        [
            (
                "Receipt required above",
                "the amount above which a receipt is required",
                "from what amount I must keep a receipt",
                "EUR",
                15,
                100,
                5,
            ),
            (
                "Submission deadline",
                "the expense submission deadline in days",
                "how many days I have to submit an expense",
                "days",
                14,
                90,
                1,
            ),
            (
                "Client dinner cap per person",
                "the client dinner cap per person",
                "how much a client dinner may cost per head",
                "EUR",
                40,
                150,
                5,
            ),
            (
                "Monthly phone allowance",
                "the monthly phone allowance",
                "how much of my phone bill is covered each month",
                "EUR",
                15,
                80,
                5,
            ),
        ],
    ),
    "Security": (
        "SEC",
        "security",
        [
            (
                "Minimum password length",
                "the minimum password length",
                "how long a password has to be at least",
                "characters",
                10,
                20,
                1,
            ),
            (
                "Screen lock timeout",
                "the screen lock timeout in minutes",
                "after how many idle minutes laptops must lock",
                "minutes",
                2,
                15,
                1,
            ),
            (
                "Incident reporting window",
                "the incident reporting window in hours",
                "how many hours I have to report an incident",
                "hours",
                1,
                72,
                1,
            ),
            (
                "Access review interval",
                "the access review interval in days",
                "how often (in days) access rights are reviewed",
                "days",
                30,
                180,
                15,
            ),
        ],
    ),
    "Remote work": (
        "RMT",
        "people",
        [
            (
                "Home office stipend",
                "the home office stipend",
                "how much I get to set up my home office",
                "EUR",
                200,
                1200,
                50,
            ),
            (
                "Office days per month",
                "the required office days per month",
                "how many days a month I have to come in",
                "days",
                2,
                12,
                1,
            ),
            (
                "Coworking allowance per month",
                "the monthly coworking allowance",
                "how much a coworking space is reimbursed monthly",
                "EUR",
                50,
                400,
                10,
            ),
            (
                "Work-abroad limit",
                "the work-from-abroad limit in days per year",
                "how many days a year I may work abroad",
                "days",
                10,
                60,
                5,
            ),
        ],
    ),
    "Equipment": (
        "EQP",
        "operations",
        [
            (
                "Laptop refresh cycle",
                "the laptop refresh cycle in months",
                "after how many months I can get a new laptop",
                "months",
                24,
                60,
                6,
            ),
            ("Monitor budget", "the monitor budget", "how much a new monitor may cost", "EUR", 150, 600, 25),
            (
                "Accessory budget per year",
                "the yearly accessory budget",
                "what I can spend on keyboards and mice yearly",
                "EUR",
                50,
                400,
                25,
            ),
            (
                "Phone upgrade interval",
                "the phone upgrade interval in months",
                "how often (in months) a work phone is replaced",
                "months",
                18,
                48,
                6,
            ),
        ],
    ),
    "Learning": (
        "LRN",
        "people",
        [
            (
                "Annual learning budget",
                "the annual learning budget",
                "how much I can spend on courses per year",
                "EUR",
                500,
                3000,
                100,
            ),
            (
                "Conference days per year",
                "the conference days per year",
                "how many days a year I can attend conferences",
                "days",
                2,
                10,
                1,
            ),
            (
                "Book allowance per quarter",
                "the quarterly book allowance",
                "how much I can spend on books each quarter",
                "EUR",
                30,
                200,
                10,
            ),
            (
                "Certification bonus",
                "the certification bonus",
                "what bonus I get for passing a certification",
                "EUR",
                100,
                1000,
                50,
            ),
        ],
    ),
}


@family(
    "doc_lookup",
    capabilities=("retrieval",),
    services=("docs",),
    knobs=("effects", "distractors", "ambiguity"),
    version=2,  # 2: the answers require the current policy doc to have been read
)
def doc_lookup(d: Draft) -> TaskSpec:
    """Look up limits, the policy code and the contact in the current policy doc; at higher effects write a summary doc."""
    e, amb = d.knobs.effects, d.knobs.ambiguity
    topics = d.sample(list(POLICIES), 1 + min(3, 1 + d.knobs.distractors // 4))
    topic, other_topics = topics[0], topics[1:]
    prefix, team, facts = POLICIES[topic]
    n_numbers = 1 if e == 1 else 2 if e <= 3 else 3
    asked = d.sample(facts, n_numbers)
    ask_contact = e >= 2
    contact = d.person(team, in_contacts=False)
    year = d.today.year

    def policy_body(values: dict[str, int], code: str, owner: dict[str, Any], effective: str, status: str) -> str:
        lines = [
            f"Policy code: {code}",
            f"Status: {status}",
            f"Effective: {effective}",
            f"Owner: {owner['name']} <{owner['email']}>",
            "",
        ]
        lines += [f"{label}: {values[label]} {unit}" for label, _, _, unit, *_ in facts]
        lines += ["", f"Questions go to the policy owner, {owner['name']} ({owner['email']})."]
        return "\n".join(lines) + "\n"

    values = {f[0]: d.amount(f[4], f[5], f[6]) for f in facts}
    code = f"{prefix}-{d.amount(100, 999)}"
    title = d.pick(["{t} policy", "{t} Policy", "Policy: {t}", "{t} guidelines"]).format(t=topic)
    body = policy_body(values, code, contact, f"{year}-{d.amount(1, 9):02d}-01", "current")
    # Near-duplicate (ambiguity 2): an outdated edition with other values, another code and owner, marked superseded.
    if amb >= 2:
        steps = {f[0]: f[6] for f in facts}
        old_values = {k: max(1, v + d.pick([-3, -2, -1, 1, 2]) * steps[k]) for k, v in values.items()}
        old_values = {k: v if v != values[k] else v + steps[k] for k, v in old_values.items()}
        old_owner = d.person(team, in_contacts=False)
        old_body = policy_body(
            old_values, f"{prefix}-{d.amount(100, 999)}", old_owner, f"{year - 1}-01-01", f"superseded by {title}"
        )
        old_id = d.add_doc(f"{title} ({year - 1} edition)", old_body)
    doc_id = d.add_doc(title, body)
    if amb >= 2 and d.chance(0.5):  # the newest doc is not always listed first
        d.records("docs").reverse()
    read_only = [doc_id] + ([old_id] if amb >= 2 else [])
    for t in other_topics:
        p, tm, fs = POLICIES[t]
        vals = {f[0]: d.amount(f[4], f[5], f[6]) for f in fs}
        owner = d.person(tm, in_contacts=False)
        lines = [
            f"Policy code: {p}-{d.amount(100, 999)}",
            "Status: current",
            f"Owner: {owner['name']} <{owner['email']}>",
            "",
        ]
        read_only.append(
            d.add_doc(f"{t} policy", "\n".join(lines + [f"{f[0]}: {vals[f[0]]} {f[3]}" for f in fs]) + "\n")
        )
    for _ in range(d.knobs.distractors // 3):  # chatter that mentions the topic without the numbers
        topic_word = d.pick(vocab.MEETING_TOPICS)
        d.add_doc(
            f"{d.pick(vocab.PROJECTS)} {topic_word} notes",
            f"We discussed the {topic.lower()} policy briefly; see the policy doc.\n",
        )

    # --- the oracle ----------------------------------------------------------------------------------
    d.call("docs_search", query=topic.lower())
    if amb >= 2:
        d.call("docs_read", id=old_id)
    d.call("docs_read", id=doc_id)
    d.check("tool_called", weight=0.5, id="read-policy", tool="docs_read", args={"id": doc_id})
    # The answers earn nothing unless the current edition was read: a guess, or figures from elsewhere, is no lookup.
    read = ["read-policy"]
    first = asked[0]
    d.check("answer_number", weight=2.0, id="answer", value=float(values[first[0]]), requires=read)
    for f in asked[1:]:
        d.check(
            "answer_contains",
            weight=1.0,
            id=f"answer-{f[0].lower().replace(' ', '-')}",
            text=str(values[f[0]]),
            requires=read,
        )
    if ask_contact:
        d.check("answer_contains", weight=1.0, id="answer-contact", text=contact["email"], requires=read)
    if e >= 4:
        d.check("answer_contains", weight=1.0, id="answer-code", text=code, requires=read)

    summary_title = f"{topic} policy cheat sheet"
    facts_text = "".join(f"- {f[0]}: {values[f[0]]} {f[3]}\n" for f in asked)
    if e >= 3:
        extra = f"- Contact: {contact['email']}\n" + (f"- Policy code: {code}\n" if e >= 4 else "")
        d.call("docs_create", title=summary_title, body=f"{summary_title}\nSource: {title}\n\n{facts_text}{extra}")
        match = {"title": f"*{topic} policy cheat sheet*"}
        for f in asked:
            d.check(
                "record",
                weight=1.0,
                id=f"sheet-{f[0].lower().replace(' ', '-')}",
                service="docs",
                collection="docs",
                match=match,
                fields={"body": f"*[!0-9]{values[f[0]]}*"},
            )
        d.check(
            "record",
            weight=0.5,
            id="sheet-contact",
            service="docs",
            collection="docs",
            match=match,
            fields={"body": f"*{contact['email']}*"},
        )
    d.allow("docs_update")
    for rid in read_only:
        d.forbid("docs_update", "policy documents are read-only", id=rid)
    if e < 3:
        d.unchanged("docs")

    # --- the instruction -----------------------------------------------------------------------------
    quoted = amb == 0 and d.chance(0.5)  # ask with the doc's own label rather than a paraphrase
    phrase = (lambda f: f"the '{f[0]}' value") if quoted else (lambda f: f[1]) if amb == 0 else (lambda f: f[2])
    where = (
        f"our {topic.lower()} policy"
        if amb == 0
        else d.variant(
            "our policies",
            "the company policy docs",
            "the handbook docs",
            held_out=(
                "the policy documents",
                "our internal policy pages",
                "the pages where the company keeps its rules",
            ),
        )
    )
    if amb >= 2:
        where += " (make sure you use the current version)"
    wanted = [phrase(f) for f in asked]
    if ask_contact:
        wanted.append(d.pick(["who owns the policy (their email)", "the policy owner's email address"]))
    if e >= 4:
        wanted.append("the policy code")
    listed = ", ".join(wanted[:-1]) + f" and {wanted[-1]}" if len(wanted) > 1 else wanted[0]
    ask = d.variant(
        "Can you look up {listed} in {where}?",
        "According to {where}, what are {listed}?" if len(wanted) > 1 else "According to {where}, what is {listed}?",
        "I need to know {listed}. It's in {where}.",
        "Please find {listed} in {where}.",
        "Quick question: {listed}? Check {where}.",
        listed=listed,
        where=where,
        held_out=(
            "Look in {where} and tell me {listed}.",
            "Could you dig up {listed} from {where}?",
            "I'm looking for {listed}; {where} should have the details.",
            "Help me find {listed} - it's written down in {where}.",
        ),
    )
    # A context sentence: surface variety only (weekday names, never digits: the answer is a number).
    who = d.person(in_contacts=False)
    context = d.variant(
        "I'm preparing the {project} {topic} on {weekday}. ",
        "Context: {who} is joining the {project} team on {weekday}. ",
        "{who} ({team}) wants to double-check something. ",
        "{who} from {team} asked me and I'm not sure. ",
        "I'm heading to {city} on {weekday}. ",
        "Onboarding {who} this week, so: ",
        "Before my {topic} with {who} on {weekday}: ",
        "A question from the {project} team. ",
        "{who} and I disagree on this one. ",
        held_out=(
            "{who} from {team} raised this with me. ",
            "This came up while planning the {project} {topic} for {weekday}. ",
            "I'm off to {city} on {weekday} and want to be sure. ",
            "For the {project} team: ",
            "Settling a debate with {who}: ",
        ),
        project=d.pick(vocab.PROJECTS),
        topic=d.pick(vocab.MEETING_TOPICS),
        weekday=d.day_name(d.amount(1, 6)).split()[0],
        who=who["name"],
        team=who["team"],
        city=who["city"],
    )
    if context.endswith(": ") and not ask.startswith("I "):
        ask = ask[0].lower() + ask[1:]
    parts = [context + ask]
    if e >= 3:
        parts.append(
            f"Also save these answers in a new doc titled '{summary_title}' (plain numbers, with the owner's email)."
        )
    first_ask = phrase(first) if amb == 0 else "the answer to the first question"
    parts.append(
        d.variant(
            "Reply with {first} first, as a plain number.",
            "Start your answer with {first}, number only.",
            "Give {first} first (just the number)" + (", then the rest." if len(wanted) > 1 else "."),
            first=first_ask,
            held_out=(
                "Lead your reply with {first} as a bare number.",
                "Open your answer with {first}, written as a plain number.",
                "Put {first} at the very start of your reply (number only)"
                + (", followed by the rest." if len(wanted) > 1 else "."),
            ),
        )
    )
    bits = [f"{values[f[0]]} {f[3]} ({f[0].lower()})" for f in asked]
    if ask_contact:
        bits.append(f"owner {contact['email']}")
    if e >= 4:
        bits.append(f"code {code}")
    return d.build(" ".join(parts), "; ".join(bits) + f" - from '{title}'.")
