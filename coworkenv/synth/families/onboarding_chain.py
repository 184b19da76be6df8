"""onboarding_chain: onboard a new hire — people from contacts, intro meeting, welcome mail, IT ticket, checklist."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from coworkenv.spec.task import TaskSpec
from coworkenv.synth import vocab
from coworkenv.synth.draft import Draft
from coworkenv.synth.family import family

EQUIPMENT = ["laptop", "monitor", "headset", "docking station", "keyboard", "webcam", "phone"]


def _workday_offset(d: Draft, lo: int, hi: int) -> int:
    """Days from today to a weekday between lo and hi days ahead."""
    while True:
        k = d.amount(lo, hi)
        if (d.today + timedelta(days=k)).weekday() < 5:
            return k


def _retitle(d: Draft, person: dict[str, Any], title: str) -> None:
    """Give a contact a role no generated colleague has, so a role search finds exactly them."""
    person["title"] = title
    for entry in d.records("contacts"):
        if entry["id"] == person["id"]:
            entry["title"] = title


def _namesake(d: Draft, like: dict[str, Any], team: str) -> dict[str, Any]:
    """A contact in another team who shares `like`'s first name: the near-duplicate of ambiguity 2."""
    p = d.person(team)
    first = like["name"].split()[0]
    taken = {q["name"] for q in d.records("contacts")}
    for _ in range(50):
        last = d.pick(vocab.LAST_NAMES)
        if f"{first} {last}" not in taken:
            break
    p["name"], p["email"] = f"{first} {last}", f"{first}.{last}@{d.domain}".lower()
    d.records("contacts")[-1].update(name=p["name"], email=p["email"])
    return p


@family(
    "onboarding_chain",
    capabilities=("multi_step", "scheduling", "communication"),
    services=("contacts", "calendar", "mail", "tickets", "files"),
    knobs=("effects", "distractors", "ambiguity"),
)
def onboarding_chain(d: Draft) -> TaskSpec:
    """Onboard a new hire: look up manager and buddy, book an intro, welcome mail, IT ticket and a checklist file."""
    team = d.pick(vocab.TEAMS)
    hire = d.person(team, in_contacts=False)  # not in the directory yet: they have not started
    hire_first, hire_last = hire["name"].split()
    n_noise = d.knobs.distractors // 2
    n_before = d.amount(0, n_noise)
    for _ in range(n_before):
        d.person()
    manager = d.person(team)
    buddy = d.person(team)
    it = d.person("operations")
    _retitle(d, it, "IT Support")
    facilities = d.person("operations")
    _retitle(d, facilities, "Workplace Coordinator")
    for _ in range(n_before, n_noise):
        d.person()
    if d.knobs.ambiguity >= 2:  # same first names in other teams: the HR mail's "from <team>" decides
        other_teams = [t for t in vocab.TEAMS if t != team]
        _namesake(d, buddy, d.pick(other_teams))
        _namesake(d, manager, d.pick(other_teams))
    d.rng.shuffle(d.records("contacts"))

    start_day = _workday_offset(d, 3, 12)
    hour = d.pick([9, 10, 11, 13, 14, 15])
    minutes = d.pick([30, 45, 60])
    intro_start = d.at(start_day, hour)
    intro_end = d.at(start_day, hour + minutes // 60, minutes % 60)
    one_on_one_start, one_on_one_end = d.at(start_day, 16), d.at(start_day, 16, 30)
    items = d.sample(EQUIPMENT, 2)
    path = f"onboarding/{hire_first}-{hire_last}.md".lower()
    when = f"{d.day_name(start_day)} at {hour}:00 UTC"

    # --- workspace noise: other tickets, events on the first day, HR mail(s) -------------------------------
    for _ in range(d.knobs.distractors // 3):
        topic, _category = d.pick(vocab.TICKET_TOPICS)
        d.add_ticket(topic.capitalize(), f"Reported by {d.person(in_contacts=False)['name']}.", assignee=it["email"])
    tid = f"t{len(d.records('tickets')) + 1}"  # what tickets_create will hand out next
    for i in range(d.knobs.distractors // 2):
        h = d.pick([8, 12, 17])  # clear of the requested slots, so no conflict muddies the task
        d.add_event(
            f"{d.pick(vocab.PROJECTS)} {d.pick(vocab.MEETING_TOPICS)}",
            d.at(start_day - i % 3, h),
            d.at(start_day - i % 3, h, 30),
            [manager["email"]] if i % 2 else [],
        )
    buddy_ref = f"{buddy['name'].split()[0]} from {team}" if d.knobs.ambiguity >= 2 else buddy["name"]
    manager_ref = (
        f"{manager['name'].split()[0]} ({team} {manager['title']})" if d.knobs.ambiguity >= 2 else manager["name"]
    )
    hr = d.person("people", in_contacts=False)
    if d.knobs.ambiguity >= 2:  # an older HR note about someone who already started
        earlier = d.person(in_contacts=False)
        d.add_mail(
            hr["email"],
            f"New starter: {earlier['name']}",
            f"{earlier['name']} joined last month; all done.",
            date=d.at(-20, 9),
        )
    hr_id = d.add_mail(
        hr["email"],
        f"New starter: {hire['name']}",
        f"Hi,\n{hire['name']} joins {team} on {d.day_name(start_day)}. Work address: {hire['email']}.\n"
        f"Manager: {manager_ref}. Onboarding buddy: {buddy_ref}.\nThanks, {hr['name']}",
        date=d.at(-1, 15),
    )

    # --- oracle: look people up, then each effect in order -------------------------------------------------
    if d.knobs.ambiguity >= 1:
        d.call("mail_search", query=f"new starter {hire_last}")
        d.call("mail_read", id=hr_id)
    d.call("contacts_search", query=manager["name"].split()[0] if d.knobs.ambiguity >= 2 else manager["name"])
    d.call("contacts_search", query=buddy["name"].split()[0] if d.knobs.ambiguity >= 2 else buddy["name"])
    d.call("contacts_search", query="IT Support")
    intro_title = f"Intro: {hire['name']}"
    attendees = [hire["email"], manager["email"], buddy["email"]]
    d.call("calendar_list", start=d.at(start_day, 0), end=d.at(start_day + 1, 0))
    d.call("calendar_create", title=intro_title, start=intro_start, end=intro_end, attendees=attendees)
    d.call(
        "mail_send",
        to=hire["email"],
        cc=manager["email"],
        subject=f"Welcome to {d.company}, {hire_first}!",
        body=f"Hi {hire_first},\nwelcome to the {team} team! Your manager is {manager['name']} and your onboarding buddy "
        f"is {buddy['name']}. See you {when}.\n{d.me['name']}",
    )
    d.call(
        "tickets_create",
        title=f"Equipment for {hire['name']}",
        assignee=it["email"],
        body=f"New starter {hire['name']} ({team}) starts {d.day_name(start_day)} and needs a {items[0]} and a {items[1]}.",
    )
    d.call(
        "files_write",
        path=path,
        content=f"# Onboarding {hire['name']}\n- Manager: {manager['name']}\n- Buddy: {buddy['name']}\n"
        f"- Intro meeting: {intro_start}\n- IT ticket: {tid}\n",
    )
    extra: list[str] = []
    if d.knobs.effects >= 3:
        d.call(
            "mail_send",
            to=buddy["email"],
            subject=f"You are {hire_first}'s onboarding buddy",
            body=f"Hi {buddy['name'].split()[0]},\nthanks for being {hire['name']}'s buddy; they start {when}.",
        )
        d.check("mail_sent", weight=1.0, id="buddy-briefed", to=buddy["email"], body_contains=[hire_first])
        extra.append(f"let the buddy know by mail that they are {hire_first}'s buddy")
    if d.knobs.effects >= 4:
        d.call(
            "calendar_create",
            title=f"1:1 {manager['name'].split()[0]} / {hire_first}",
            start=one_on_one_start,
            end=one_on_one_end,
            attendees=[hire["email"], manager["email"]],
        )
        d.check(
            "event_exists",
            weight=1.0,
            id="one-on-one-booked",
            start=one_on_one_start,
            end=one_on_one_end,
            attendees_include=[hire["email"], manager["email"]],
        )
        extra.append(f"book a half-hour 1:1 for {hire_first} and the manager at 16:00 UTC that same day")
    if d.knobs.effects >= 5:
        d.call("contacts_search", query="Workplace Coordinator")
        d.call(
            "tickets_create",
            title=f"Building badge for {hire['name']}",
            assignee=facilities["email"],
            body=f"Please prepare a badge for {hire['name']}, starting {d.day_name(start_day)}.",
        )
        d.check(
            "record",
            weight=1.0,
            id="badge-ticket",
            service="tickets",
            collection="tickets",
            match={"title": f"*badge*{hire_last}*"},
            fields={"assignee": facilities["email"]},
        )
        extra.append(f"open a second ticket titled 'Building badge for {hire['name']}' for our Workplace Coordinator")

    # --- checks ----------------------------------------------------------------------------------------------
    d.check(
        "event_exists", weight=2.0, id="intro-booked", start=intro_start, end=intro_end, attendees_include=attendees
    )
    d.check(
        "mail_sent",
        weight=2.0,
        id="welcome-sent",
        to=hire["email"],
        cc=manager["email"],
        subject_contains="welcome",
        body_contains=[buddy["name"]],
    )
    equipment = {"match": {"title": f"*equipment*{hire_last}*"}, "service": "tickets", "collection": "tickets"}
    d.check("record", weight=1.5, id="it-ticket-assigned", fields={"assignee": it["email"]}, **equipment)
    for i, item in enumerate(items):
        d.check("record", weight=0.5, id=f"it-ticket-item-{i + 1}", fields={"body": f"*{item}*"}, **equipment)
    d.check("file_contains", weight=1.0, id="checklist-manager", path=path, text=manager["name"])
    d.check("file_contains", weight=1.0, id="checklist-buddy", path=path, text=buddy["name"])
    d.check("file_contains", weight=1.0, id="checklist-ticket", path=path, regex=rf"\b{tid}\b")

    # --- instruction -----------------------------------------------------------------------------------------
    if d.knobs.ambiguity == 0:
        intro = d.variant(
            "{hire} ({email}) joins the {team} team on {day}; their manager is {manager} and their buddy is {buddy}.",
            "New hire alert: {hire} <{email}> starts in {team} on {day}. Manager: {manager}. Buddy: {buddy}.",
            hire=hire["name"],
            email=hire["email"],
            team=team,
            day=d.day_name(start_day),
            manager=manager["name"],
            buddy=buddy["name"],
            held_out=(
                "{hire} ({email}) starts in {team} on {day}, with {manager} as manager and {buddy} as buddy.",
                "We have a new starter: {hire}, {email}, joining {team} on {day}. {manager} will be the manager and {buddy} the buddy.",
            ),
        )
    else:
        intro = d.variant(
            "HR emailed me about our new starter {hire}; the details (start day, manager, buddy) are in that mail.",
            "{hire} is starting soon - see the HR 'New starter' email for who their manager and buddy are.",
            hire=hire["name"],
            held_out=(
                "Our new starter {hire} is joining soon; HR's mail has the start day, the manager and the buddy.",
                "HR sent me the details for {hire}, who starts soon - the manager, the buddy and the start day are in that email.",
            ),
        )
    steps = [
        f"Book a {minutes}-minute meeting titled '{intro_title}' on their first day at {hour}:00 UTC with {hire_first}, the manager and the buddy.",
        d.variant(
            "Send {first} a welcome email (subject with 'Welcome') cc'ing the manager, and mention the buddy's full name.",
            "Email {first} a welcome note - put 'Welcome' in the subject, cc the manager, name the buddy in full.",
            first=hire_first,
            held_out=(
                "Write {first} a welcome mail: a subject containing 'Welcome', the manager in cc, and the buddy named in full.",
                "Send a welcome message to {first} with 'Welcome' in the subject and the manager cc'd; include the buddy's full name.",
            ),
        ),
        d.variant(
            "Open an IT ticket titled 'Equipment for {hire}' asking for a {a} and a {b}, assigned to {it}.",
            "Raise a ticket 'Equipment for {hire}' for a {a} and a {b}; assign it to {it}.",
            hire=hire["name"],
            a=items[0],
            b=items[1],
            it=it["email"] if d.knobs.ambiguity == 0 else "our IT Support contact",
            held_out=(
                "Create an IT ticket called 'Equipment for {hire}' requesting a {a} and a {b}, and assign it to {it}.",
                "File a ticket titled 'Equipment for {hire}' for a {a} plus a {b}, assigned to {it}.",
            ),
        ),
        f"Write a checklist to {path} listing the manager's and buddy's full names and the IT ticket id.",
    ]
    if extra:
        steps.append("Also " + "; ".join(extra) + ".")
    lead = d.variant(
        "Please handle the onboarding.",
        "Can you run the onboarding steps?",
        "Onboarding time!",
        "",
        held_out=("Could you take care of the onboarding?", "Here's the onboarding to do.", ""),
    )
    instruction = " ".join(s for s in [intro, lead, *steps] if s)
    answer = (
        f"Onboarding for {hire['name']} done: intro booked, welcome sent, IT ticket {tid} opened, checklist at {path}."
    )
    return d.build(instruction, answer)
