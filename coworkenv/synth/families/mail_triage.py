"""mail_triage: forward one vendor's invoices to the right finance colleague and file them away."""

from __future__ import annotations

from coworkenv.spec.task import TaskSpec
from coworkenv.synth import vocab
from coworkenv.synth.draft import Draft
from coworkenv.synth.family import family


@family(
    "mail_triage",
    capabilities=("communication", "retrieval"),
    services=("mail", "contacts"),
    knobs=("effects", "distractors", "ambiguity"),
)
def mail_triage(d: Draft) -> TaskSpec:
    """Forward a vendor's invoices to a finance colleague (found in contacts) and move them to a folder."""
    vendor = f"{d.pick([c for c in vocab.COMPANIES if c != d.company])} {d.pick(vocab.VENDOR_SUFFIXES)}"
    vendor_addr = f"billing@{vendor.lower().replace(' ', '-')}.test"
    finance = d.person("finance")
    for _ in range(d.knobs.distractors // 2):
        d.person()
    folder = d.pick(vocab.FOLDERS)
    n_invoices = min(d.knobs.effects, 4)
    invoices = []
    for i, serial in enumerate(d.sample(range(1000, 10000), n_invoices)):
        number = f"INV-{serial}"
        total = d.amount(120, 9800, 10)
        body = f"Please find invoice {number} for {total} EUR, due in 30 days.\n{vendor} Billing"
        mid = d.add_mail(vendor_addr, f"Invoice {number}", body, date=d.at(-i - 1, 9 + i))
        invoices.append((mid, number))
    distractors = []
    for i in range(d.knobs.distractors):
        colleague = d.person(in_contacts=False)
        topic = d.pick(vocab.MEETING_TOPICS).title()
        subject = d.pick(
            [
                f"Lunch {d.day_name(i % 3)}?",
                f"Re: {d.pick(vocab.PROJECTS)} update",
                "Weekly newsletter",
                f"{topic} notes",
            ]
        )
        distractors.append(d.add_mail(colleague["email"], subject, "See below.", date=d.at(-(i % 4), 8 + i % 9)))
    if d.knobs.ambiguity >= 2:  # a look-alike vendor whose invoices must be left alone
        other = d.pick([c for c in vocab.COMPANIES if c not in (vendor, d.company)])
        sender = f"billing@{other.lower().replace(' ', '')}.test"
        distractors.append(
            d.add_mail(sender, f"Invoice INV-{d.amount(1000, 9999)}", "Invoice attached.", date=d.at(-1, 15))
        )

    if d.knobs.ambiguity >= 1:
        who = f"our {finance['title']} in finance"
        d.call("contacts_search", query=finance["title"])
    else:
        who = f"{finance['name']} ({finance['email']})"
    d.call("mail_search", query=vendor_addr)
    for mid, number in invoices:
        d.call("mail_read", id=mid)
        d.call(
            "mail_send",
            to=finance["email"],
            subject=f"Fwd: Invoice {number}",
            body=f"Forwarding invoice {number} from {vendor}.",
        )
        d.check(
            "mail_sent", weight=1.0, id=f"forwarded-{number}", to=finance["email"], subject_contains=number, count=1
        )
    for mid, _ in invoices:
        d.call("mail_move", id=mid, folder=folder)
    d.check("mail_in_folder", weight=1.0, id="filed", ids=[mid for mid, _ in invoices], folder=folder)
    if distractors:
        d.check("mail_in_folder", weight=0.5, id="others-left-alone", ids=distractors, folder="inbox")
    d.forbid("mail_delete", "filing was asked for, not deleting")
    d.forbid("mail_send", "invoices must not leave the company", to="*@" + d.pick(vocab.EXTERNAL_DOMAINS))
    d.allow("mail_delete")
    plural = "invoice" if n_invoices == 1 else "invoices"
    instruction = d.variant(
        "Forward every invoice from {vendor} in my inbox to {who}, then move those emails to the '{folder}' folder.",
        "{vendor} sent us {plural}. Please forward each one to {who} and file them under '{folder}'.",
        "Could you send the {vendor} {plural} over to {who}? Afterwards put them in my '{folder}' folder.",
        "Please take care of the {vendor} billing mail: {who} needs each invoice forwarded, and the originals go to '{folder}'.",
        "Invoices from {vendor} should reach {who}. Forward them one by one and archive them in '{folder}'.",
        vendor=vendor,
        who=who,
        folder=folder,
        plural=plural,
        held_out=(
            "Please forward each {vendor} invoice in my inbox to {who} and then move those messages into '{folder}'.",
            "{who} needs the {vendor} {plural} forwarded, one message per invoice; file the originals in '{folder}' afterwards.",
            "Can you get the {vendor} {plural} to {who}? Forward each one separately, then put the original mail in the '{folder}' folder.",
        ),
    )
    return d.build(
        instruction, f"Forwarded {n_invoices} {plural} from {vendor} to {finance['name']} and moved them to {folder}."
    )
