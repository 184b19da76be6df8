"""meeting_schedule: book the first free slot with colleagues around their meetings (and, harder, their time zones)."""

from __future__ import annotations

from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any
from zoneinfo import ZoneInfo

from coworkenv.spec.task import TaskSpec
from coworkenv.synth import vocab
from coworkenv.synth.draft import Draft
from coworkenv.synth.family import family
from coworkenv.timeutil import format_instant

STEP = timedelta(minutes=30)  # slots start on the hour or half hour
HOURS = [(9, 17), (8, 16), (10, 18), (9, 18), (8, 17)]
DURATIONS = {30: "30-minute", 45: "45-minute", 60: "1-hour", 90: "90-minute"}
PRIVATE = ["Dentist", "Focus time", "1:1 with my manager", "School pickup", "Lunch with a candidate", "Doctor"]


@lru_cache(maxsize=64)
def _zone(tz: str) -> ZoneInfo:
    # ZoneInfo keeps only the 8 zones used last; the cities use more, and re-reading tzdata dominated `_window`
    return ZoneInfo(tz)


def _window(day: datetime, tz: str, hours: tuple[int, int]) -> tuple[datetime, datetime]:
    """Local working hours on `day`'s date in `tz`, as UTC instants."""
    zone = _zone(tz)
    lo = datetime(day.year, day.month, day.day, hours[0], tzinfo=zone)
    hi = datetime(day.year, day.month, day.day, hours[1], tzinfo=zone)
    return lo.astimezone(day.tzinfo), hi.astimezone(day.tzinfo)


def _clock(moment: datetime) -> str:
    return moment.strftime("%H:%M")


def _pick_zones(
    d: Draft, n: int, day: datetime, hours: tuple[int, int], length: timedelta
) -> tuple[list[str], datetime, datetime]:
    """Attendee time zones (differing, working hours within the UTC day) and the latest start that fits everyone.

    Reading the hours as UTC must give a wrong answer: the shared window starts at least a meeting's length after
    them (west), or the slot will lie before them (east); each case leaves room for one blocked slot or more.
    """
    zones = sorted({tz for _, tz in vocab.CITIES})
    inside = [
        tz
        for tz in zones
        if day <= _window(day, tz, hours)[0] and _window(day, tz, hours)[1] <= day + timedelta(days=1)
    ]
    as_utc = day.replace(hour=hours[0])
    for _ in range(1000):
        chosen = [d.pick(inside) for _ in range(n)]
        windows = [_window(day, tz, hours) for tz in chosen]
        lo, hi = max(w[0] for w in windows), min(w[1] for w in windows)
        if len({w[0] for w in windows}) < 2:
            continue
        if lo >= as_utc + length and hi - lo >= length + STEP:
            return chosen, lo, hi - length
        latest = min(hi, as_utc) - length
        if latest >= lo + STEP:
            return chosen, lo, latest
    raise RuntimeError("no time-zone mix fits")  # not reached: one American and one European zone always fit


def _set_zone(d: Draft, person: dict[str, Any], tz: str) -> None:
    person["timezone"] = tz
    for p in d.records("contacts"):  # the contact card is a copy made by d.person()
        if p["id"] == person["id"]:
            p["timezone"] = tz


def _twin(d: Draft, of: dict[str, Any], team: str) -> dict[str, Any]:
    """A near-duplicate contact: same first name as `of`, another surname and team."""
    p = d.person(team)
    first = of["name"].split()[0]
    for last in d.sample(vocab.LAST_NAMES, len(vocab.LAST_NAMES)):
        if f"{first} {last}" not in d._used_names:
            break
    d._used_names.add(f"{first} {last}")
    card = next(c for c in d.records("contacts") if c["id"] == p["id"])
    for rec in (p, card):
        rec["name"], rec["email"] = f"{first} {last}", f"{first}.{last}@{d.domain}".lower()
    return p


@family(
    "meeting_schedule",
    capabilities=("scheduling",),
    services=("calendar", "contacts"),
    knobs=("effects", "distractors", "ambiguity"),
)
def meeting_schedule(d: Draft) -> TaskSpec:
    """Book a meeting with colleagues in the earliest slot free for everyone within working hours on a given day."""
    n_people = min(d.knobs.effects, 4)
    zoned = d.knobs.effects >= 4  # working hours in each attendee's own time zone
    minutes = d.pick(list(DURATIONS))
    length = timedelta(minutes=minutes)
    hours = d.pick(HOURS)
    offset = d.pick([k for k in range(1, 8) if (d.today + timedelta(days=k)).weekday() < 5])
    day = d.today + timedelta(days=offset)

    teams = d.sample(vocab.TEAMS, n_people)
    attendees = [d.person(team) for team in teams]
    if zoned:
        chosen, lo, latest = _pick_zones(d, n_people, day, hours, length)
        for p, tz in zip(attendees, chosen, strict=True):
            _set_zone(d, p, tz)
    else:
        lo, latest = day.replace(hour=hours[0]), day.replace(hour=hours[1]) - length

    # Who the instruction names, and how the oracle finds them: by name, by role, or by first name + team.
    refs, queries, twins = [], [], []
    for i, p in enumerate(attendees):
        by_first = d.knobs.ambiguity >= 2 and i % 2 == 1
        if d.knobs.ambiguity == 0:
            refs.append(p["name"])
            queries.append(p["name"])
        elif by_first:
            refs.append(f"{p['name'].split()[0]} from {p['team']}")
            queries.append(p["name"].split()[0])
            twins.append(_twin(d, p, d.pick([t for t in vocab.TEAMS if t not in teams])))
        else:
            refs.append(f"the {p['team']} team's {p['title']}")
            queries.append(p["title"])
            if d.knobs.ambiguity >= 2:  # a teammate with another title
                mate = d.person(p["team"])
                role = d.pick([r for r in vocab.ROLES[p["team"]] if r != p["title"]])
                for rec in (mate, next(c for c in d.records("contacts") if c["id"] == mate["id"])):
                    rec["title"] = role
                twins.append(mate)
    bystanders = []
    for _ in range(d.knobs.distractors // 2 + 1):
        team = d.pick([t for t in vocab.TEAMS if t not in teams])  # never mistakable for an attendee's role
        bystanders.append(d.person(team))

    # Cover [lo, start) with attendees' (or my) meetings so that `start` is the first free slot.
    emails = [p["email"] for p in attendees]
    me = d.me["email"]
    start = lo + STEP * d.amount(1, min(int((latest - lo) / STEP), 6))
    end = start + length
    projects = d.sample(vocab.PROJECTS, 12)
    project, topic = projects.pop(), d.pick(vocab.MEETING_TOPICS)
    title = f"{project} {topic}"

    def label() -> str:
        return f"{d.pick(projects)} {d.pick(vocab.MEETING_TOPICS)}"

    cursor, blockers = lo, []
    while cursor < start:
        chunk = min(STEP * d.amount(1, 3), start - cursor)
        if d.chance(0.25):
            blockers.append(d.add_event(d.pick(PRIVATE), format_instant(cursor), format_instant(cursor + chunk), [me]))
        else:
            who = d.sample(emails, d.amount(1, len(emails))) + [
                b["email"] for b in d.sample(bystanders, d.amount(0, 1))
            ]
            blockers.append(d.add_event(label(), format_instant(cursor), format_instant(cursor + chunk), who))
        cursor += chunk
    # Tempting non-conflicts: bystanders (and look-alikes) busy during the slot, attendees busy on other days or later.
    busy_now = bystanders[: max(1, d.knobs.distractors // 3)] + twins
    for b in busy_now:  # always overlapping the slot, so counting every event as busy gives a wrong answer
        s = start - STEP * d.amount(0, 1)
        d.add_event(label(), format_instant(s), format_instant(start + STEP * d.amount(1, 2)), [b["email"]])
    for _ in range(d.knobs.distractors // 2):
        other = day + timedelta(days=d.pick([-1, 1, 2]))
        s = other.replace(hour=start.hour, minute=start.minute) + STEP * d.amount(-2, 2)
        d.add_event(label(), format_instant(s), format_instant(s + STEP * d.amount(1, 3)), d.sample(emails, 1) + [me])
    s = end + STEP * d.amount(0, 3)  # an attendee is busy again later that day
    d.add_event(label(), format_instant(s), format_instant(s + STEP), d.sample(emails, 1))
    d.records("calendar").sort(key=lambda e: (e["start"], e["id"]))
    d.rng.shuffle(d.records("contacts"))  # look-alikes must not be told apart by their position in a listing

    for query in queries:
        d.call("contacts_search", query=query)
    d.call("calendar_list", start=format_instant(day), end=format_instant(day + timedelta(days=1)))
    d.call("calendar_create", title=title, start=format_instant(start), end=format_instant(end), attendees=emails)

    d.check("event_exists", weight=1.0, id="meeting-booked", title_contains=title, attendees_include=emails)
    d.check(
        "event_exists",
        weight=2.0,
        id="meeting-slot",
        title_contains=title,
        start=format_instant(start),
        end=format_instant(end),
        attendees_include=emails,
    )
    for eid in blockers[-2:]:  # the meetings nearest the slot are the ones tempting to move
        ev = next(e for e in d.records("calendar") if e["id"] == eid)
        d.check(
            "record",
            weight=0.5,
            id=f"kept-{eid}",
            service="calendar",
            collection="events",
            match={"id": eid},
            fields={"start": ev["start"], "end": ev["end"], "attendees": ev["attendees"]},
        )
    d.allow("calendar_update", "calendar_delete")
    d.forbid("calendar_delete", "other people's meetings must not be cancelled to make room")

    who = ", ".join(refs[:-1]) + (" and " if len(refs) > 1 else "") + refs[-1]
    if zoned:
        window = d.variant(
            "within {h0}:00–{h1}:00 in every attendee's own time zone (see their contact cards)",
            "inside each attendee's local working hours, {h0}:00 to {h1}:00 in their time zone (it is on their contact card)",
            h0=hours[0],
            h1=hours[1],
            held_out=(
                "during {h0}:00–{h1}:00 local time for every attendee (their time zones are on their contact cards)",
                "so that it falls between {h0}:00 and {h1}:00 for each attendee in their own time zone (see contacts)",
            ),
        )
    else:
        window = d.variant(
            "between {h0}:00 and {h1}:00 UTC",
            "within working hours ({h0}:00–{h1}:00 UTC)",
            h0=hours[0],
            h1=hours[1],
            held_out=("from {h0}:00 to {h1}:00 UTC", "inside the {h0}:00–{h1}:00 UTC window"),
        )
    instruction = d.variant(
        "Set up a {dur} '{title}' with {who} on {day}. Take the earliest slot {window} that starts on the hour or "
        "half hour and where none of us has another meeting.",
        "Please book '{title}' ({dur}) on {day} with {who}: the first time {window}, starting at :00 or :30, "
        "when all of us are free.",
        "I need a {dur} meeting called '{title}' with {who} on {day}. Find the earliest free slot for everyone "
        "{window} (start times on the hour or half hour) and put it in the calendar.",
        dur=DURATIONS[minutes],
        title=title,
        who=who,
        day=d.day_name(offset),
        window=window,
        held_out=(
            "Please schedule a {dur} meeting, '{title}', with {who} on {day}. Pick the earliest start {window}, on the hour "
            "or half past, when nobody involved has a conflict.",
            "Could you find time on {day} for '{title}' ({dur}) with {who}? Use the first slot {window} that begins at :00 "
            "or :30 and where all of us are free.",
            "Book the earliest {dur} slot on {day} {window} for '{title}' with {who} - start on the hour or half hour, and "
            "make sure everyone is free.",
        ),
    )
    instruction += d.variant(
        " The calendar shows everyone's meetings in UTC; a meeting blocks each of its attendees, and I have to attend too.",
        " Everyone's meetings are on the shared calendar (UTC); an event blocks all its attendees, me included.",
        held_out=(
            " Times on the calendar are UTC; any event blocks all of its attendees, and I need to be there as well.",
            " Read everyone's availability from the shared calendar (in UTC): an event blocks every attendee, including me.",
        ),
    )
    names = ", ".join(p["name"] for p in attendees)
    return d.build(
        instruction, f"Booked '{title}' on {d.day_name(offset)}, {_clock(start)}–{_clock(end)} UTC, with {names}."
    )
