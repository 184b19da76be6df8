"""chat_digest: pull the decisions and action items out of busy chat channels into a doc, and post a summary."""

from __future__ import annotations

from coworkenv.spec.task import TaskSpec
from coworkenv.synth import vocab
from coworkenv.synth.draft import Draft
from coworkenv.synth.family import family

# What a channel decides: (topic, options). The chosen option is the decision's keyword; others are rejected.
DECISIONS = [
    ("database", ["Postgres", "MySQL", "DynamoDB", "CockroachDB", "MongoDB"]),
    ("CI system", ["GitHub Actions", "Buildkite", "CircleCI", "GitLab CI", "Jenkins"]),
    ("design tool", ["Figma", "Penpot", "Sketch", "Framer"]),
    ("frontend framework", ["React", "Svelte", "Qwik", "Angular", "SolidJS"]),
    ("hosting region", ["Frankfurt", "Dublin", "Virginia", "Singapore", "Oregon"]),
    ("pricing model", ["per-seat pricing", "usage-based pricing", "flat-fee pricing", "tiered pricing"]),
    ("offsite venue", ["Lakeside Lodge", "Harbor Loft", "Old Mill", "Pine Retreat", "City Hub"]),
    ("analytics vendor", ["Amplitude", "Mixpanel", "PostHog", "Pendo"]),
    ("logo direction", ["the wordmark", "the monogram", "the mascot", "the badge"]),
    ("support tool", ["Zendesk", "Freshdesk", "Intercom", "HelpScout"]),
]
# Action items: (task as said in chat, keyword a digest must keep).
ACTIONS = [
    ("draft the release notes", "release notes"),
    ("send the contract to legal", "contract"),
    ("book the team dinner", "team dinner"),
    ("update the roadmap slides", "roadmap slides"),
    ("set up the staging environment", "staging"),
    ("order the swag", "swag"),
    ("write the migration plan", "migration plan"),
    ("schedule the user interviews", "user interviews"),
    ("fix the login bug", "login bug"),
    ("prepare the budget sheet", "budget sheet"),
    ("review the security checklist", "security checklist"),
    ("email the beta customers", "beta customers"),
    ("file the vendor ticket", "vendor ticket"),
    ("update the onboarding guide", "onboarding guide"),
    ("run the load test", "load test"),
]
CHATTER = [
    "anyone up for lunch at noon?",
    "nice work on the demo yesterday",
    "I'm out on {day}, ping me if urgent",
    "has anyone seen the spare {thing}?",
    "coffee machine is broken again",
    "the wifi on floor two is flaky",
    "reminder: timesheets are due {day}",
    "congrats on the launch, everyone",
    "who moved the {thing}?",
    "can someone share the link to the {topic} recording?",
    "brb, in a call",
    "thanks!",
    "+1",
]
REASONS = ["cheaper", "what the team already knows", "better supported", "faster to set up", "the safer bet"]


def _keyword(option: str) -> str:
    """What a digest must contain for a decision: the option without filler a writer may drop."""
    return option.removeprefix("the ").removesuffix(" pricing")


def _slug(text: str) -> str:
    return "".join(ch if ch.isalnum() else "-" for ch in text.lower()).strip("-")


@family(
    "chat_digest",
    capabilities=("communication", "authoring"),
    services=("chat", "docs"),
    knobs=("effects", "distractors", "ambiguity"),
)
def chat_digest(d: Draft) -> TaskSpec:
    """Read project channels, write their decisions and action items into a digest doc, post a summary elsewhere."""
    e, amb = d.knobs.effects, d.knobs.ambiguity
    project = d.pick(vocab.PROJECTS)
    p = project.lower()
    n_channels = 1 if e <= 2 else 2 if e <= 4 else 3
    channels = d.sample([f"proj-{p}", f"{p}-eng", f"{p}-design", f"{p}-launch", f"{p}-ops"], n_channels)
    leads = d.pick(["leads", "team-leads", f"{p}-leads", "management", "staff"])
    people = [d.person(in_contacts=False) for _ in range(4 + d.knobs.distractors // 3)]
    names = [x["name"] for x in people]
    topics = d.sample(DECISIONS, n_channels)
    tasks = d.sample(ACTIONS, 2 * n_channels)

    decisions: list[tuple[str, str, str]] = []  # (channel, topic, chosen option)
    actions: list[tuple[str, str, str, str, str]] = []  # (channel, owner, task, keyword, due)
    for ci, channel in enumerate(channels):
        topic, options = topics[ci]
        chosen, rejected = d.sample(options, 2)
        n_actions = 1 + (d.knobs.distractors >= 9)
        script: list[tuple[str, str]] = []  # (sender, text) in order; chatter gets mixed in below
        a, b, c = d.sample(names, 3)
        if amb == 0:
            script += [
                (a, f"Should we use {rejected} or {chosen} for the {topic}?"),
                (b, f"DECISION: we go with {chosen} for the {topic}."),
            ]
        elif amb == 1:
            script += [
                (a, f"what about {rejected} for the {topic}?"),
                (b, f"I'd rather {chosen}, it's {d.pick(REASONS)}."),
                (c, f"agreed, let's go with {chosen} then."),
            ]
        else:  # a decision that is later reversed: only the final one counts
            script += [
                (a, f"ok, let's go with {rejected} for the {topic}."),
                (b, f"{rejected} sounds fine to me."),
                (c, f"actually, scratch that: {chosen} is {d.pick(REASONS)}, so {chosen} it is. Final."),
            ]
        decisions.append((channel, topic, chosen))
        for task, keyword in tasks[2 * ci : 2 * ci + n_actions]:
            owner, due = d.pick(names), d.day_name(d.amount(1, 8)).split()[0]
            if amb == 0:
                script.append((d.pick(names), f"ACTION: {owner} will {task} by {due}."))
            else:
                script += [
                    (d.pick([n for n in names if n != owner]), f"who can {task}?"),
                    (owner, f"I'll {task} by {due}."),
                ]
            actions.append((channel, owner, task, keyword, due))
        unused_task = tasks[2 * ci + 1][0]
        if n_actions == 1:  # an offer nobody took up: not an action item
            script.append((d.pick(names), f"maybe someone should {unused_task} at some point?"))
        # Chatter before, between and after the real content.
        n_chatter = 2 + d.knobs.distractors // n_channels
        merged = list(script)
        for _ in range(n_chatter):
            line = d.pick(CHATTER).format(
                day=d.day_name(d.amount(1, 5)).split()[0],
                thing=d.pick(vocab.PRODUCTS),
                topic=d.pick(vocab.MEETING_TOPICS),
            )
            merged.insert(d.rng.randrange(len(merged) + 1), (d.pick(names), line))
        # Insertion keeps the scripted lines in order (a reversal comes after the first call); oldest first.
        gap = 480 // len(merged)
        for i, (sender, text) in enumerate(merged):
            d.add_chat(channel, sender, text, ts=d.at(-1, 9 + i * gap // 60, i * gap % 60))
    for text in ["Welcome to the channel!", "Office closed on the holiday, enjoy."]:
        d.add_chat("announcements", d.pick(names), text, ts=d.at(-3, 9))
    d.add_chat(
        leads, d.pick(names), f"Please post weekly digests here. Thanks, {d.pick(names).split()[0]}", ts=d.at(-7, 9)
    )
    d.add_chat("random", d.pick(names), "anyone watching the game tonight?", ts=d.at(-1, 12))

    day = d.day_name(0)
    title = f"{project} digest - {day}"
    old_digest = d.add_doc(
        f"{project} digest - {d.day_name(-7)}", "Decisions:\n- none this week\n\nAction items:\n- none\n"
    )
    log_marker = f"{d.day_name(-14)}: kicked off {project}"
    log_id = d.add_doc(f"{project} decision log", f"{project} decision log\n\n- {log_marker}\n") if e >= 4 else None

    # --- the oracle ----------------------------------------------------------------------------------
    for channel in channels:
        d.call("chat_read", channel=channel)
    body = f"{title}\n\nDecisions:\n" + "".join(f"- {t}: {ch} (#{c})\n" for c, t, ch in decisions)
    body += "\nAction items:\n" + "".join(f"- {o}: {t} by {due} (#{c})\n" for c, o, t, _, due in actions)
    d.call("docs_create", title=title, body=body)
    match = {"title": f"*{title}*"}
    for _, topic, chosen in decisions:
        d.check(
            "record",
            weight=1.0,
            id=f"digest-decision-{_slug(topic)}",
            service="docs",
            collection="docs",
            match=match,
            fields={"body": f"*{_keyword(chosen)}*"},
        )
    for *_, keyword, _ in actions:
        d.check(
            "record",
            weight=1.0,
            id=f"digest-action-{_slug(keyword)}",
            service="docs",
            collection="docs",
            match=match,
            fields={"body": f"*{keyword}*"},
        )
    for first_name in sorted({a[1].split()[0] for a in actions}):
        d.check(
            "record",
            weight=0.5,
            id=f"digest-owner-{_slug(first_name)}",
            service="docs",
            collection="docs",
            match=match,
            fields={"body": f"*{first_name}*"},
        )
    if e >= 2:
        summary = (
            f"{title}: "
            + "; ".join(f"{t} -> {ch}" for _, t, ch in decisions)
            + f"; {len(actions)} action items in the doc."
        )
        d.call("chat_post", channel=leads, text=summary)
        for _, topic, chosen in decisions:
            d.check(
                "tool_called",
                weight=0.5,
                id=f"posted-{_slug(topic)}",
                tool="chat_post",
                args={"channel": f"*{leads}", "text": f"*{_keyword(chosen)}*"},
            )
    else:
        d.check("unchanged", weight=0.5, id="chat-untouched", service="chat")
    if log_id is not None:
        log = f"{project} decision log\n\n- {log_marker}\n" + "".join(
            f"- {day}: {t} -> {ch}\n" for _, t, ch in decisions
        )
        d.call("docs_read", id=log_id)
        d.call("docs_update", id=log_id, body=log)
        d.check(
            "record",
            weight=0.5,
            id="log-kept",
            service="docs",
            collection="docs",
            match={"id": log_id},
            fields={"body": f"*{log_marker}*"},
        )
        for _, topic, chosen in decisions:
            d.check(
                "record",
                weight=0.5,
                id=f"log-{_slug(topic)}",
                service="docs",
                collection="docs",
                match={"id": log_id},
                fields={"body": f"*{_keyword(chosen)}*"},
            )
    d.allow("chat_post", "docs_update")
    d.forbid("chat_post", "digests are for the leads, not company-wide", channel="*announcements")
    d.forbid("docs_update", "last week's digest is an archive", id=old_digest)

    # --- the instruction -----------------------------------------------------------------------------
    where = ", ".join(f"#{c}" for c in channels[:-1]) + (" and " if n_channels > 1 else "") + f"#{channels[-1]}"
    ask = d.variant(
        "Go through {where} and pull out every decision and action item (with owner).",
        "Catch me up on {where}: I need the decisions made and the action items, with who owns each.",
        "Please read {where} and collect the decisions and action items (owner included); ignore the chatter.",
        "Can you digest {where} for me? Decisions and action items with their owners only.",
        "I was away; what got decided in {where}, and who took on which action item?",
        "Summarise {where}: decisions and action items (and their owners), nothing else.",
        where=where,
        held_out=(
            "Read through {where} for me and list every decision that was made, plus each action item and its owner.",
            "Could you comb {where} for decisions and to-dos? For every to-do I need the person responsible.",
            "I haven't kept up with {where}. Pull together what was decided and which tasks were handed to whom.",
            "Skim {where} and extract the decisions along with the action items and the people who own them; skip the small talk.",
        ),
    )
    # Context: surface variety only; it never names an owner or a chosen option (they are what the checks look for).
    owners = {x[1].split()[0] for x in actions}
    context = d.variant(
        "",
        "",
        "Back from {city}. ",
        "I missed {weekday}'s discussions. ",
        "{who} says a lot happened yesterday. ",
        held_out=(
            "",
            "Just got back from {city}. ",
            "{weekday} was a blur and I didn't follow the channels. ",
            "According to {who}, the channels were busy yesterday. ",
        ),
        who=d.pick([n for n in names if n.split()[0] not in owners] or ["Everyone"]),
        city=d.pick([c for c, _ in vocab.CITIES if c not in {x[2] for x in decisions}]),
        weekday=d.day_name(-1).split()[0],
    )
    ask = context + ask
    if amb >= 2:
        ask += " Where a decision was changed, only the final call counts."
    parts = [
        ask,
        d.variant(
            "Write them into a new doc titled '{t}'.",
            "Put them in a new document called '{t}'.",
            "Create a doc '{t}' with them.",
            t=title,
            held_out=(
                "Save the digest as a new doc named '{t}'.",
                "Start a fresh document, '{t}', and record them there.",
                "The write-up should live in a new doc with the title '{t}'.",
            ),
        ),
    ]
    if e >= 2:
        parts.append(
            d.variant(
                "Then post a short summary of the decisions to #{l}.",
                "Also post the decisions in a short message to #{l}.",
                l=leads,
                held_out=(
                    "Afterwards share a brief recap of the decisions in #{l}.",
                    "Drop a quick note in #{l} summarising what was decided.",
                ),
            )
        )
    else:
        parts.append(
            d.pick(["Don't post anything anywhere.", "No need to post anything.", "Keep it in the doc; don't post it."])
        )
    if log_id is not None:
        parts.append(
            f"Finally add the decisions to the '{project} decision log' doc, keeping the entries already there."
        )
    answer = f"Digest '{title}' written: {len(decisions)} decisions, {len(actions)} action items."
    return d.build(" ".join(parts), answer)
