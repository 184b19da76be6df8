"""multi_turn_booking: book "the usual sync" with my team lead; when, how long, where and what it is about are only in the user's head."""

from __future__ import annotations

from datetime import timedelta

from coworkenv.spec.task import TaskSpec
from coworkenv.synth import vocab
from coworkenv.synth.draft import Draft
from coworkenv.synth.family import family
from coworkenv.timeutil import format_instant, parse_instant

ROOMS = [
    "Kestrel",
    "Atlas",
    "Juniper",
    "Orchid",
    "Summit",
    "Fjord",
    "Lagoon",
    "Meridian",
    "Cobalt",
    "Aspen",
    "Harbor",
    "Ivy",
]
DURATION_WORDS = {30: "half an hour", 45: "forty-five minutes", 60: "an hour", 90: "an hour and a half"}

# Per fact: keywords that make the scripted user reveal it, keywords the asked_user check accepts, the oracle's questions.
ASK = {
    "when": (
        ["when", "what day", "which day", "what time", "date"],
        ["when", "day", "time", "date"],
        ["When should it be - which day and what time?", "What day and time works for you?", "When do you want it?"],
    ),
    "duration": (
        ["how long", "duration", "length"],
        ["how long", "duration", "length", "minutes"],
        ["How long should it run?", "What duration should I block?", "How long do you need?"],
    ),
    "location": (
        ["where", "which room", "what room", "location"],
        ["where", "room", "location"],
        ["Where should it take place?", "Which room should I put it in?", "What location should I use?"],
    ),
    "topic": (
        ["topic", "agenda", "what is it about", "subject"],
        ["topic", "agenda", "about", "subject"],
        [
            "What's the topic, so I can title it?",
            "What is it about - what should the agenda say?",
            "What subject should I give it?",
        ],
    ),
}


def _plus_minutes(instant: str, minutes: int) -> str:
    return format_instant(parse_instant(instant) + timedelta(minutes=minutes))


@family(
    "multi_turn_booking",
    capabilities=("multi_turn", "scheduling"),
    services=("calendar", "contacts"),
    knobs=("rounds", "distractors", "ambiguity"),
)
def multi_turn_booking(d: Draft) -> TaskSpec:
    """Book the usual sync with my team lead; the day/time (and at higher rounds duration, room, topic) must be asked for."""
    team = d.me["team"]
    lead = d.person(team)
    d.records("contacts")[-1]["title"] = lead["title"] = "Team Lead"  # the one role the instruction can point at
    for _ in range(d.knobs.distractors // 2):
        d.person()
    if d.knobs.ambiguity >= 1:  # I am in the directory too, so "my team" can be looked up
        d.records("contacts").append({k: v for k, v in d.me.items() if k != "city"} | {"id": d.next_id("c")})
    if d.knobs.ambiguity >= 2:  # other teams' leads with the same first name: only the one in my team is right
        first = lead["name"].split()[0]
        taken = {p["name"] for p in d.records("contacts")}
        lasts = [n for n in vocab.LAST_NAMES if f"{first} {n}" not in taken]
        for other_team, last in zip(
            d.sample([t for t in vocab.TEAMS if t != team], 2), d.sample(lasts, 2), strict=True
        ):
            d.person(other_team)
            d.records("contacts")[-1].update(
                title="Team Lead", name=f"{first} {last}", email=f"{first}.{last}@{d.domain}".lower()
            )
    d.rng.shuffle(d.records("contacts"))

    # --- the hidden facts ---------------------------------------------------------------------------------
    day = d.amount(1, 10)
    day += {5: 2, 6: 1}.get((d.today + timedelta(days=day)).weekday(), 0)
    start = d.at(day, d.pick([9, 10, 11, 13, 14, 15]), d.pick([0, 30]))
    minutes = d.pick(list(DURATION_WORDS))
    end = _plus_minutes(start, minutes)
    room = d.pick(ROOMS) + " room"
    project = d.pick([p for p in vocab.PROJECTS if p.lower() not in d.domain and p not in room])
    title_word = d.pick(["sync", "catch-up", "check-in"])
    hidden = ["when", *d.sample(["duration", "location", "topic"], d.knobs.rounds - 1)]
    hhmm = start[11:16]
    values = {
        "when": (start, f"{d.day_name(day)} at {hhmm} UTC."),
        "duration": (minutes, d.pick([f"{minutes} minutes.", f"{minutes} minutes should do."])),
        "location": (room, d.pick([f"The {room}.", f"Let's use the {room}."])),
        "topic": (project, f"It's about {project} - call it '{project} {title_word}'."),
    }
    facts = {name: values[name][0] for name in hidden}
    d.ask_user(
        facts,
        [(ASK[name][0], values[name][1]) for name in hidden],
        persona=f"{d.me['name']}, {d.me['title']}; brief, answers exactly the question asked.",
    )

    # --- other meetings, none of them clashing with the slot ------------------------------------------------
    kept = []
    for i in range(d.knobs.distractors):
        other_day = d.pick([k for k in range(0, 12) if k != day])
        h = d.pick([8, 9, 11, 14, 16])
        title = f"{d.pick(vocab.PROJECTS)} {d.pick(vocab.MEETING_TOPICS)}"
        attendees = [lead["email"]] if i % 3 == 0 else []
        d.add_event(title, d.at(other_day, h), d.at(other_day, h, 45), attendees, d.pick(ROOMS) + " room")
        kept.append(d.records("calendar")[-1])
    d.add_event("Focus time", d.at(day, 7), d.at(day, 8, 30))

    # --- oracle: ask, look up, book ------------------------------------------------------------------------
    for name in hidden:
        d.say(d.pick(ASK[name][2]))
    if d.knobs.ambiguity >= 2:
        d.call("contacts_search", query=d.me["name"])
        d.call("contacts_search", query=f"{lead['name'].split()[0]} Team Lead")
    elif d.knobs.ambiguity == 1:
        d.call("contacts_search", query=lead["name"].split()[0])
    else:
        d.call("contacts_search", query=lead["name"])
    title = f"{project} {title_word}"
    d.call("calendar_list", start=d.at(day, 0), end=d.at(day + 1, 0))
    d.call("calendar_create", title=title, start=start, end=end, attendees=[lead["email"]], location=room)

    # --- checks ----------------------------------------------------------------------------------------------
    for name in hidden:
        d.check("asked_user", weight=1.0, id=f"asked-{name}", about=ASK[name][1])
    d.check("event_exists", weight=3.0, id="booked-slot", start=start, end=end, attendees_include=[lead["email"]])
    d.check("event_exists", weight=1.0, id="booked-title", title_contains=project, start=start)
    d.check(
        "record",
        weight=1.0,
        id="booked-room",
        service="calendar",
        collection="events",
        match={"title": f"*{project}*", "start": start},
        fields={"location": f"*{room.split()[0]}*"},
    )
    if kept:  # another meeting with the lead must not be moved or renamed
        event = kept[0]
        d.check(
            "record",
            weight=0.5,
            id="other-meeting-kept",
            service="calendar",
            collection="events",
            match={"id": event["id"]},
            fields={"start": event["start"], "title": event["title"]},
        )

    # --- instruction: says only what the user would say up front --------------------------------------------
    what = f"the usual {title_word}" if "topic" in hidden else f"the usual {project} {title_word}"
    if d.knobs.ambiguity == 0:
        who = f"my team lead {lead['name']} ({lead['email']})"
    else:
        first = lead["name"].split()[0]
        who = d.pick([f"{first}, my team lead", f"my team lead {first}", f"{first} (the lead of my team)"])
    details = []
    if "duration" not in hidden:
        details.append(f"make it {DURATION_WORDS[minutes]}")
    if "location" not in hidden:
        details.append(f"in the {room}")
    instruction = d.variant(
        "Book {what} with {who}{details}.",
        "Can you put {what} with {who} in my calendar{details}?",
        "Please set up {what} with {who}{details} - ask me for anything you need.",
        "I need {what} with {who} booked{details}.",
        held_out=(
            "Please schedule {what} with {who}{details}.",
            "Could you get {what} with {who} onto my calendar{details}? Check with me on anything missing.",
            "Set up {what} with {who} for me{details}.",
        ),
        what=what,
        who=who,
        details=(", " + ", ".join(details)) if details else "",
    )
    preamble = d.pick(
        ["", "Quick one.", "Calendar favour:", "Hi!", "Morning.", "One more thing for this week's admin:"]
    )
    closer = d.pick(
        [
            "",
            "I'll fill in the details.",
            "Ask if anything is unclear.",
            "Thanks!",
            f"Thanks, {d.me['name'].split()[0]}",
        ]
    )
    instruction = " ".join(part for part in (preamble, instruction, closer) if part)
    answer = f"Booked '{title}' with {lead['name']} for {start[:10]}, {hhmm}-{end[11:16]} UTC, {room}."
    return d.build(instruction, answer)
