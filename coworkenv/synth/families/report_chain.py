"""report_chain: sheet → figure → doc → mail → ticket (→ KPI sheet → chat), each step feeding the next."""

from __future__ import annotations

from coworkenv.spec.task import TaskSpec
from coworkenv.synth import vocab
from coworkenv.synth.draft import Draft
from coworkenv.synth.family import family

METRICS = ["units", "orders", "signups", "returns", "deliveries", "renewals"]
MONTHS = ["august", "september", "october", "november"]


def _next_doc_id(d: Draft) -> str:
    """The id docs_create will hand out (same rule as Workspace.new_id), so the oracle can cite it."""
    taken = {doc["id"] for doc in d.records("docs")}
    n = len(d.records("docs")) + 1
    while f"d{n}" in taken:
        n += 1
    return f"d{n}"


@family(
    "report_chain",
    capabilities=("multi_step", "data_analysis", "communication"),
    services=("sheets", "docs", "mail", "tickets", "chat"),
    knobs=("effects", "distractors", "ambiguity"),
)
def report_chain(d: Draft) -> TaskSpec:
    """Total a figure from a sheet, write it into a new doc, mail it to the requester and close the ticket citing the doc."""
    regions = d.sample(vocab.REGIONS, 4 + d.knobs.ambiguity)
    region, other_region = regions[0], regions[1]
    month = d.pick(MONTHS)
    metric = d.pick(METRICS)
    actuals_only = d.knobs.ambiguity >= 2  # forecast rows for the same region/month must be left out

    # --- the source sheet: a few target rows among distractor rows -----------------------------------------
    products = d.sample(vocab.PRODUCTS, 4)
    columns = ["region", "month", "product", metric] + (["kind"] if actuals_only else [])
    target_rows = [[region, month, p, d.amount(3, 90)] for p in d.sample(products, d.pick([2, 3, 4]))]
    rows = [r + (["actual"] if actuals_only else []) for r in target_rows]
    for _ in range(4 + d.knobs.distractors):
        other_month = d.pick([m for m in MONTHS if m != month])
        r, m = d.pick([(d.pick(regions[1:]), month), (region, other_month), (d.pick(regions), other_month)])
        rows.append([r, m, d.pick(products), d.amount(3, 90)] + (["actual"] if actuals_only else []))
    if actuals_only:
        for p in d.sample(products, 2):
            rows.append([region, month, p, d.amount(3, 90), "forecast"])
    d.rng.shuffle(rows)
    figure = sum(r[3] for r in target_rows)
    number = d.number(figure)
    source = d.pick(["sales_ledger", "regional_sales", "monthly_figures", "ops_metrics"])
    d.add_sheet(source, columns, rows)

    # --- the colleague who asked, their request mail, and look-alike requests ------------------------------
    requester = d.person(in_contacts=False)
    manager = d.person(requester["team"], in_contacts=False)
    cc_manager = d.knobs.effects >= 5
    first = requester["name"].split()[0]

    def chatter(i: int) -> None:  # unrelated inbox noise, some of it before the request so ids vary
        sender = d.person(in_contacts=False)
        d.add_mail(
            sender["email"],
            d.pick([f"Re: {d.pick(vocab.PROJECTS)} kickoff", "Lunch?", "Weekly digest"]),
            "Nothing urgent, see you soon.",
            date=d.at(-(i % 4), 8 + i % 8),
        )

    n_noise = d.knobs.distractors // 2
    n_before = d.amount(0, n_noise)
    for i in range(n_before):
        chatter(i)
    request_id = d.add_mail(
        requester["email"],
        f"{month.title()} {metric} for {region}?",
        f"Hi,\ncould you send me the total {metric} for {region} in {month} once it is compiled?\nThanks, {first}",
        cc=[manager["email"]],
        date=d.at(-2, 10),
    )
    if d.knobs.ambiguity >= 2:  # someone else asked for a different region: the agent must not mix them up
        other = d.person(in_contacts=False)
        d.add_mail(
            other["email"],
            f"{month.title()} {metric} for {other_region}?",
            f"Hello, when you have it, what was the {metric} total for {other_region} in {month}?\n{other['name']}",
            date=d.at(-1, 11),
        )

    for i in range(n_before, n_noise):
        chatter(i)

    # --- docs and tickets already in the workspace ---------------------------------------------------------
    for _ in range(1 + d.knobs.distractors // 3):
        d.add_doc(
            d.pick(
                [f"{d.pick(vocab.PROJECTS)} notes", "Reporting guidelines", f"{other_region.title()} {metric} summary"]
            ),
            "Figures are taken from the monthly sheet and shared with whoever asked for them.",
        )
    doc_id = _next_doc_id(d)
    status = d.pick(["resolved", "closed"])
    ticket_title = f"{region.title()} {metric} report ({month.title()})"

    def helpdesk_ticket() -> None:
        topic, _category = d.pick(vocab.TICKET_TOPICS)
        d.add_ticket(topic.capitalize(), f"Reported by {d.person(in_contacts=False)['name']}.")

    n_tickets = d.knobs.distractors // 2
    n_before = d.amount(0, n_tickets)
    for _ in range(n_before):
        helpdesk_ticket()
    tid = d.add_ticket(
        ticket_title,
        f"Compile the {month} {metric} total for {region} and share it with {requester['name']}.",
        status=d.pick(["open", "in_progress"]),
        assignee=d.me["email"],
    )
    other_tid = None
    if d.knobs.ambiguity >= 1:
        other_tid = d.add_ticket(
            f"{other_region.title()} {metric} report ({month.title()})",
            f"Compile the {other_region} figure.",
            assignee=d.me["email"],
        )
    for _ in range(n_before, n_tickets):
        helpdesk_ticket()

    # --- the KPI sheet cell (always: with doc, mail and ticket it makes the 4 effects of a multi_step chain),
    # and the chat post from effects 4 -------------------------------------------------------------------------
    kpi_sheet, channel = "kpis", d.pick(["reporting", "metrics", "team-updates"])
    kpi_regions = d.sample(regions, len(regions))
    kpi_row = kpi_regions.index(region)
    d.add_sheet(
        kpi_sheet,
        ["region", "month", "metric", "value"],
        [[r, month, metric, None if r == region else d.amount(20, 300)] for r in kpi_regions],
    )
    if d.knobs.effects >= 4:
        d.add_chat(channel, d.person(in_contacts=False)["name"], f"Reminder: post the {month} figures here when ready.")
        d.add_chat("random", d.person(in_contacts=False)["name"], "Coffee machine is fixed!")

    # --- oracle ---------------------------------------------------------------------------------------------
    if d.knobs.ambiguity >= 1:
        d.call("mail_search", query=f"{metric} {region}")
        d.call("mail_read", id=request_id)
    d.call("sheets_read", sheet=source)
    doc_title = f"{region.title()} {metric} summary - {month.title()}"
    d.call(
        "docs_create",
        title=doc_title,
        body=f"Total {metric} for {region} in {month}: {number}.\nSource: sheet {source}.",
    )
    mail_body = f"Hi {first},\nthe total {metric} for {region} in {month} is {number}. Details are in doc {doc_id}.\n{d.me['name']}"
    mail_args = {
        "to": requester["email"],
        "subject": f"{region.title()} {metric} for {month.title()}",
        "body": mail_body,
    }
    if cc_manager:
        mail_args["cc"] = manager["email"]
    d.call("mail_send", **mail_args)
    if d.knobs.ambiguity >= 1:
        d.call("tickets_search", query=f"{region} {metric}")
    d.call("tickets_update", id=tid, status=status, comment=f"Done: figure {number} written to doc {doc_id}.")
    d.call("sheets_read", sheet=kpi_sheet)
    d.call("sheets_update", sheet=kpi_sheet, row=kpi_row, column="value", value=figure)
    if d.knobs.effects >= 4:
        d.call("chat_post", channel=channel, text=f"{region.title()} {metric} for {month}: {number} (doc {doc_id}).")

    # --- checks: one per effect, the figure as the thread through them --------------------------------------
    d.check("answer_number", weight=1.5, id="figure", value=float(figure))
    d.check(
        "record",
        weight=2.0,
        id="doc-written",
        service="docs",
        collection="docs",
        match={"title": f"*{region}*"},
        fields={"body": f"*{number}*"},
    )
    d.check(
        "mail_sent",
        weight=2.0,
        id="requester-mailed",
        to=requester["email"],
        body_contains=[number],
        **({"cc": manager["email"]} if cc_manager else {}),
    )
    d.check(
        "record",
        weight=1.0,
        id="ticket-status",
        service="tickets",
        collection="tickets",
        match={"id": tid},
        fields={"status": status},
    )
    d.check(
        "record",
        weight=1.0,
        id="ticket-cites-doc",
        service="tickets",
        collection="tickets",
        match={"id": tid},
        fields={"comments": {"text": f"*{doc_id}*"}},
    )
    d.check(
        "sheet_cell",
        weight=1.0,
        id="kpi-filled",
        sheet=kpi_sheet,
        match={"region": region, "month": month},
        column="value",
        value=float(figure),
    )
    if d.knobs.effects >= 4:
        d.check(
            "tool_called",
            weight=1.0,
            id="chat-posted",
            tool="chat_post",
            args={"channel": f"*{channel}", "text": f"*{number}*"},
        )
    if other_tid is not None:  # the look-alike ticket stays as it was
        d.check(
            "record",
            weight=0.5,
            id="other-ticket-untouched",
            service="tickets",
            collection="tickets",
            match={"id": other_tid},
            fields={"status": "open"},
        )

    # --- instruction ---------------------------------------------------------------------------------------
    what = f"the total {metric} for {region} in {month}" + (" (actuals only, not forecasts)" if actuals_only else "")
    if d.knobs.ambiguity == 0:
        who, ticket = f"{requester['name']} ({requester['email']})", f"ticket {tid}"
    else:
        who, ticket = f"the colleague who emailed me asking for the {region} number", "the matching report ticket"
    steps = [
        d.variant(
            "Work out {what} from the {source} sheet.",
            "Using the {source} sheet, compute {what}.",
            "Take {what} from the {source} sheet.",
            what=what,
            source=source,
            held_out=("Calculate {what} using the {source} sheet.", "From the {source} sheet, figure out {what}."),
        ),
        d.variant(
            "Put it in a new doc titled '{t}'.",
            "Write it up in a new doc called '{t}'.",
            t=doc_title,
            held_out=("Record it in a new doc named '{t}'.", "Create a doc called '{t}' with it."),
        ),
        d.variant(
            "Mail the figure to {who}{cc}.",
            "Email the number to {who}{cc}.",
            who=who,
            cc=(", cc'ing " + (manager["email"] if d.knobs.ambiguity == 0 else "whoever was cc'd on the request"))
            if cc_manager
            else "",
            held_out=("Send the figure by email to {who}{cc}.", "Let {who} have the number by mail{cc}."),
        ),
        d.variant(
            "Then mark {ticket} {status} with a comment that cites the new doc's id.",
            "Finally set {ticket} to {status} and comment with the id of the doc you created.",
            ticket=ticket,
            status=status,
            held_out=(
                "Last, set {ticket} to {status} and add a comment citing the id of the new doc.",
                "Then move {ticket} to {status}, commenting with the new doc's id.",
            ),
        ),
    ]
    steps.append(f"Also fill in the {region} value for {month} in the {kpi_sheet} sheet.")
    if d.knobs.effects >= 4:
        steps.append(f"Post the figure and the doc id in #{channel}.")
    intro = d.variant(
        "Monthly reporting, please.",
        "Can you run this report for me?",
        "Quick reporting chore.",
        "",
        held_out=("Reporting task for you.", "Could you do this month's report?", ""),
    )
    signature = d.pick(["", f"Thanks, {d.me['name'].split()[0]}", f"- {d.me['name'].split()[0]}"])
    instruction = " ".join(s for s in [intro, *steps, "Reply with the figure first.", signature] if s)
    answer = f"{number} {metric} for {region} in {month}; written to doc {doc_id}, mailed to {requester['name']}, ticket {tid} {status}."
    return d.build(instruction, answer)
