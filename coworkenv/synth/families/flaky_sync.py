"""flaky_sync: copy this week's figures from a CSV export into a dashboard sheet and confirm in chat, on flaky services."""

from __future__ import annotations

from coworkenv.spec.task import TaskSpec
from coworkenv.synth import vocab
from coworkenv.synth.draft import Draft
from coworkenv.synth.family import family

METRICS = ["signups", "orders", "visits", "leads", "downloads", "trials", "tickets"]


@family(
    "flaky_sync",
    capabilities=("robustness", "data_analysis"),
    services=("files", "sheets", "chat"),
    knobs=("effects", "distractors", "ambiguity", "fault_rate"),
)
def flaky_sync(d: Draft) -> TaskSpec:
    """Copy per-region figures from a CSV into a sheet (update or append rows), post the total to chat; 429/500 faults."""
    d.fault_rate = d.knobs.fault_rate  # the oracle retries; an agent must too
    metric = d.pick(METRICS)
    n = 1 + d.knobs.effects
    regions = d.sample(vocab.REGIONS, n + 2 + d.knobs.distractors // 3)
    copied, idle = regions[:n], regions[n:]  # idle: on the dashboard, not in this week's export
    values = {r: d.amount(40, 990) for r in copied}
    total = sum(values.values())
    new_region = copied[-1] if d.knobs.effects >= 3 else None  # not on the dashboard yet: needs an append

    # --- the export (and last week's, and plan rows, as look-alikes) ------------------------------------------
    folder = d.pick(["exports", "data/exports", "bi/exports"])
    stamp = d.pick(["current", "this_week", "latest"])
    path = f"{folder}/{metric}_{stamp}.csv"
    with_plan = d.knobs.ambiguity >= 2
    header = f"region,{metric}" + (",type" if with_plan else "")
    lines = [f"{r},{values[r]}" + (",actual" if with_plan else "") for r in copied]
    if with_plan:
        lines += [f"{r},{d.amount(40, 990)},plan" for r in d.sample(copied, min(3, n))]
    d.rng.shuffle(lines)
    d.add_file(path, header + "\n" + "\n".join(lines) + "\n")
    if d.knobs.ambiguity >= 1:
        d.add_file(
            f"{folder}/{metric}_previous.csv",
            header
            + "\n"
            + "\n".join(f"{r},{d.amount(40, 990)}" + (",actual" if with_plan else "") for r in d.sample(regions, 3))
            + "\n",
        )
        d.add_file(
            f"{folder}/README.md", f"The newest export is {metric}_{stamp}.csv; older ones are kept for reference.\n"
        )

    # --- the dashboard sheet ---------------------------------------------------------------------------------
    sheet = d.pick([f"{metric}_dashboard", f"weekly_{metric}", "kpi_dashboard"])
    on_sheet = [r for r in regions if r != new_region]
    d.rng.shuffle(on_sheet)
    last_week = {r: d.amount(40, 990) for r in on_sheet}
    d.add_sheet(sheet, ["region", "last_week", "this_week"], [[r, last_week[r], None] for r in on_sheet])
    channel = d.pick(["metrics", "ops", "dashboards", "weekly-numbers"])
    for i in range(1 + d.knobs.distractors // 4):
        text = d.pick(["Dashboard refresh soon?", "Thanks for last week's numbers!", "Any delays?"])
        d.add_chat(channel, d.person(in_contacts=False)["name"], text, ts=d.at(-1 - i, 10))

    # --- oracle ------------------------------------------------------------------------------------------------
    if d.knobs.ambiguity >= 1:
        d.call("files_list", dir=folder)
    d.call("files_read", path=path)
    d.call("sheets_read", sheet=sheet)
    for r in copied:
        if r == new_region:
            d.call("sheets_append", sheet=sheet, row=[r, None, values[r]])
        else:
            d.call("sheets_update", sheet=sheet, row=on_sheet.index(r), column="this_week", value=values[r])
    d.call("chat_post", channel=channel, text=f"{sheet} updated: {n} regions, total {metric} this week {total}.")

    # --- checks: final state, not the path taken ----------------------------------------------------------------
    for r in copied:
        d.check(
            "sheet_cell",
            weight=1.0,
            id=f"copied-{r}",
            sheet=sheet,
            match={"region": r},
            column="this_week",
            value=float(values[r]),
        )
    for r in idle[:2]:  # last week's column is history: copying into the wrong column shows up here
        d.check(
            "sheet_cell",
            weight=0.25,
            id=f"history-kept-{r}",
            sheet=sheet,
            match={"region": r},
            column="last_week",
            value=float(last_week[r]),
        )
    d.check(
        "tool_called",
        weight=1.0,
        id="chat-confirmed",
        tool="chat_post",
        args={"channel": f"*{channel}", "text": f"*{total}*"},
    )
    d.check("answer_number", weight=1.0, id="total", value=float(total))
    d.check("unchanged", weight=0.5, id="export-untouched", path=path)

    source = path if d.knobs.ambiguity == 0 else f"this week's {metric} export (under {folder}/)"
    rows_note = (
        f" Regions missing from the sheet get a new row ({new_region} is new)."
        if new_region and d.knobs.ambiguity == 0
        else (" Add a row for any region the sheet does not have yet." if new_region else "")
    )
    plan_note = " Only the actual figures, not the plan rows." if with_plan else ""
    instruction = d.variant(
        "Copy the figures from {source} into the this_week column of the {sheet} sheet.{rows}{plan} Then post the total in #{channel}.",
        "Please sync {source} to the {sheet} sheet (column this_week).{rows}{plan} Afterwards tell #{channel} the total.",
        "Update {sheet}: this_week should match {source}.{rows}{plan} Finish with a note with the total in #{channel}.",
        held_out=(
            "Bring the this_week column of the {sheet} sheet in line with {source}.{rows}{plan} When that's done, share the total in #{channel}.",
            "Could you transfer the numbers in {source} to the {sheet} sheet, column this_week?{rows}{plan} Then let #{channel} know the total.",
            "The {sheet} sheet's this_week column needs the figures from {source}.{rows}{plan} Post the total to #{channel} at the end.",
        ),
        source=source,
        sheet=sheet,
        rows=rows_note,
        plan=plan_note,
        channel=channel,
    )
    flaky = d.pick(
        [
            "",
            "The sheets API has been flaky today.",
            "Heads-up: our services are timing out now and then.",
            "Retry if something fails.",
        ]
    )
    asker = d.person(in_contacts=False)["name"].split()[0]
    purpose = d.variant(
        "{who} needs it for the {meeting}.",
        "It's for {who}'s {meeting}.",
        "{who} is waiting on it for the {meeting}.",
        who=asker,
        meeting=f"{d.pick(vocab.PROJECTS)} {d.pick(vocab.MEETING_TOPICS)}",
        held_out=(
            "{who} wants it ready for the {meeting}.",
            "This feeds into {who}'s {meeting}.",
            "{who} plans to use it at the {meeting}.",
        ),
    )
    signature = d.pick(["", f"Thanks, {d.me['name'].split()[0]}"])
    instruction = " ".join(p for p in (instruction, purpose, flaky, "Reply with the total first.", signature) if p)
    return d.build(
        instruction, f"{total} {metric} in total this week; {n} regions copied into {sheet} and posted in #{channel}."
    )
