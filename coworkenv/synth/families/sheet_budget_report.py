"""sheet_budget_report: total a budget sheet by category, find over-budget lines, write a report doc, flag the sheet."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from coworkenv.spec.task import TaskSpec
from coworkenv.synth import vocab
from coworkenv.synth.draft import Draft
from coworkenv.synth.family import family

CATEGORY_ITEMS = {
    "travel": ["flights", "hotels", "taxis", "per diems", "train tickets"],
    "software": ["licenses", "SaaS seats", "cloud credits", "plugins", "API usage"],
    "hardware": ["laptops", "monitors", "docks", "headsets", "test devices"],
    "events": ["venue", "catering", "booth", "swag", "AV rental"],
    "training": ["courses", "conference tickets", "books", "certifications", "coaching"],
    "contractors": ["design agency", "translation", "audit", "freelance dev", "copywriting"],
    "office": ["snacks", "plants", "furniture", "cleaning", "supplies"],
    "recruiting": ["job ads", "agency fees", "assessments", "referral bonuses", "career fair"],
    "marketing": ["paid search", "social ads", "webinars", "print", "sponsorships"],
    "facilities": ["rent", "utilities", "security service", "repairs", "parking"],
}
TITLES = [
    "{Team} budget report - {month}",
    "{month} budget report ({Team})",
    "{Team} spend report, {month}",
    "Budget review {month} - {Team}",
    "{Team} {month} budget summary",
]
COLUMNS = ["line", "category", "month", "budgeted", "actual", "status"]
ON_TRACK, OVER = "on track", "over budget"


@family(
    "sheet_budget_report",
    capabilities=("data_analysis", "authoring"),
    services=("sheets", "docs"),
    knobs=("effects", "distractors", "ambiguity"),
)
def sheet_budget_report(d: Draft) -> TaskSpec:
    """Total a team budget sheet per category, list over-budget lines in a new report doc, flag them in the sheet."""
    e, team = d.knobs.effects, d.me["team"]
    month = d.today.strftime("%B")
    prev_month = (d.today.replace(day=1) - timedelta(days=1)).strftime("%B")
    n_cats = {1: 2, 2: 2, 3: 2, 4: 3, 5: 4}[e]
    categories = d.sample(list(CATEGORY_ITEMS), n_cats + 1 + d.knobs.distractors // 6)
    targets, others = categories[:n_cats], categories[n_cats:]
    projects = d.sample(vocab.PROJECTS, 12)

    def line(category: str, used: set[str]) -> str:
        for _ in range(100):
            name = f"{d.pick(projects)} {d.pick(CATEGORY_ITEMS[category])}"
            if name not in used:
                used.add(name)
                return name
        raise RuntimeError("ran out of line names")

    def amounts(over: bool | None) -> tuple[int, int]:
        budgeted = d.amount(500, 12000, 50)
        if over is None:  # exactly on budget: not over
            return budgeted, budgeted
        factor = d.rng.uniform(1.04, 1.35) if over else d.rng.uniform(0.55, 0.97)
        return budgeted, int(budgeted * factor)

    used: set[str] = set()
    rows: list[list[Any]] = []
    for i, cat in enumerate(targets):
        n_lines = 2 + d.chance(0.5) + (d.knobs.distractors >= 9)
        # The first target category always has one line over and one under, so the report is never empty.
        plan = [True, False] if i == 0 else []
        plan += [d.chance(0.4) for _ in range(n_lines - len(plan))]
        if i == 1 and d.knobs.ambiguity >= 1:
            plan[0] = None  # exactly on budget: a boundary case that stays "on track"
        for over in plan:
            rows.append([line(cat, used), cat, month, *amounts(over), ON_TRACK])
    for cat in others:  # other categories this month, possibly over budget, not in the report's scope
        for _ in range(2):
            rows.append([line(cat, used), cat, month, *amounts(d.chance(0.5)), ON_TRACK])
    for _ in range(d.knobs.distractors // 2):  # last month's lines of the same categories (already closed)
        rows.append([line(d.pick(targets), used), d.pick(targets), prev_month, *amounts(d.chance(0.5)), "closed"])
    d.rng.shuffle(rows)
    current = [r for r in rows if r[2] == month]

    sheet = d.pick(["budget_{t}", "{t}_budget", "{t}_spend"]).format(t=team)
    d.add_sheet(sheet, COLUMNS, rows)
    for other_team in d.sample([t for t in vocab.TEAMS if t != team], 1 + d.knobs.distractors // 4):
        fake = [[line(c, used), c, month, *amounts(d.chance(0.5)), ON_TRACK] for c in d.sample(list(CATEGORY_ITEMS), 3)]
        d.add_sheet(sheet.replace(team, other_team), COLUMNS, fake)
    if d.knobs.ambiguity >= 2:  # a stale draft of the same sheet with other figures
        draft = [[r[0], r[1], r[2], r[3], d.amount(400, 12000, 10), r[5]] for r in rows]
        d.add_sheet(f"{sheet}_draft", COLUMNS, draft)

    title_format = d.pick(TITLES)
    title = title_format.format(Team=team.title(), month=month)
    old_report = d.add_doc(
        title_format.format(Team=team.title(), month=prev_month), f"Final figures for {prev_month}. Do not edit.\n"
    )
    for _ in range(1 + d.knobs.distractors // 4):
        topic = d.pick(vocab.MEETING_TOPICS)
        d.add_doc(f"{d.pick(vocab.PROJECTS)} {topic} notes", f"Notes from the {topic}. Nothing about budgets here.\n")

    totals = {c: sum(r[4] for r in current if r[1] == c) for c in targets}
    over_rows = [r for r in current if r[1] in targets and r[4] > r[3]]
    overspend = sum(r[4] - r[3] for r in over_rows)

    # --- the oracle ----------------------------------------------------------------------------------
    if d.knobs.ambiguity >= 1:
        d.call("sheets_list")
    d.call("sheets_read", sheet=sheet)
    body = f"{title}\n\nActual spend by category:\n" + "".join(f"- {c}: {totals[c]}\n" for c in targets)
    if e >= 2:
        body += "\nOver-budget lines:\n" + "".join(f"- {r[0]} ({r[1]}): {r[4]} vs {r[3]} budgeted\n" for r in over_rows)
    body += f"\nTotal overspend: {overspend}\n"
    d.call("docs_create", title=title, body=body)
    doc = {"title": f"*{title}*"}
    for c in targets:
        d.check(
            "record",
            weight=1.0,
            id=f"report-total-{c}",
            service="docs",
            collection="docs",
            match=doc,
            fields={"body": f"*{c}*{totals[c]}*"},
        )
    if e >= 2:
        for r in over_rows:
            d.check(
                "record",
                weight=0.5,
                id=f"report-lists-{r[0].replace(' ', '-').lower()}",
                service="docs",
                collection="docs",
                match=doc,
                fields={"body": f"*{r[0]}*"},
            )
    if e >= 3:
        for r in over_rows:
            d.call("sheets_update", sheet=sheet, row=rows.index(r), column="status", value=OVER)
            d.check(
                "sheet_cell",
                weight=1.0,
                id=f"flagged-{r[0].replace(' ', '-').lower()}",
                sheet=sheet,
                match={"line": r[0]},
                column="status",
                equals=OVER,
            )
        for r in current:
            if r[1] in targets and r[3] == r[4]:
                d.check(
                    "sheet_cell",
                    weight=0.5,
                    id="on-budget-not-flagged",
                    sheet=sheet,
                    match={"line": r[0]},
                    column="status",
                    equals=ON_TRACK,
                )
        out_of_scope = [r for r in current if r[1] not in targets and r[4] > r[3]]
        if out_of_scope:  # over budget too, but outside the report's categories: must stay as it was
            r = out_of_scope[0]
            d.check(
                "sheet_cell",
                weight=0.5,
                id="out-of-scope-not-flagged",
                sheet=sheet,
                match={"line": r[0]},
                column="status",
                equals=ON_TRACK,
            )
    if e >= 5:
        in_scope = [r for r in current if r[1] in targets]
        budget_sum, actual_sum = sum(r[3] for r in in_scope), sum(r[4] for r in in_scope)
        d.call("sheets_append", sheet=sheet, row=["TOTAL", "", month, budget_sum, actual_sum, ""])
        d.check(
            "sheet_cell",
            weight=1.0,
            id="total-row",
            sheet=sheet,
            match={"line": "TOTAL"},
            column="actual",
            value=float(actual_sum),
        )
    d.check("answer_number", weight=2.0, id="answer", value=float(overspend))
    d.allow("docs_update")
    d.forbid("docs_update", f"the {prev_month} report is final", id=old_report)

    # --- the instruction -----------------------------------------------------------------------------
    where = (
        f"the '{sheet}' sheet"
        if d.knobs.ambiguity == 0
        else d.variant(
            "my team's ({team}) budget sheet",
            "the {team} budget sheet",
            "our {team} team's spend tracker",
            team=team,
            held_out=("the budget sheet for {team}", "the {team} team's budget tracker"),
        )
    )
    cats = ", ".join(targets[:-1]) + f" and {targets[-1]}"
    ask = d.variant(
        "Using {where}, total this month's ({month}) actual spend for {cats}.",
        "Go through {where} and add up the actual {month} spend for {cats}.",
        "I need the {month} actuals for {cats} from {where}, summed per category.",
        "Please total the actual spend per category ({cats}) for {month} in {where}.",
        "Could you sum {where} by category for {month}? I only care about {cats}, actual amounts.",
        "Time for the monthly budget check: from {where}, get the actual {month} spend of {cats}.",
        held_out=(
            "From {where}, add up what was actually spent in {month} on {cats}, category by category.",
            "Could you total the actual {month} spending for {cats} using {where}?",
            "Please work out each category's actual spend in {month} for {cats}, from {where}.",
        ),
        where=where,
        month=month,
        cats=cats,
    )
    parts = [ask]
    report = d.variant(
        "Create a doc titled '{title}' with each category's total",
        "Write the totals per category into a new doc called '{title}'",
        "Put them in a new document '{title}', one line per category with its total",
        title=title,
        held_out=(
            "Make a new doc called '{title}' listing each category with its total",
            "Record the per-category totals in a new document titled '{title}'",
        ),
    )
    if e >= 2:
        report += " and every line of those categories whose actual is above its budget"
    parts.append(report + " (plain integers, no currency signs or thousands separators).")
    if e >= 3:
        parts.append(f"In the sheet, set the status of those over-budget {month} lines to '{OVER}'.")
    if e >= 5:
        parts.append(
            f"Finally append a row to the sheet with line 'TOTAL', month {month}, the summed budgeted and actual "
            "amounts of those categories' lines this month, and empty category and status."
        )
    parts.append(
        d.variant(
            "Reply with the total overspend (actual minus budget over the over-budget lines in those categories) first.",
            "Answer with the overspend first: the sum of actual minus budgeted over those categories' over-budget lines.",
            "Start your reply with the number: how much those categories' over-budget lines exceed their budgets in total.",
            "In your reply, lead with the total amount by which over-budget lines in those categories exceed their budgets.",
            held_out=(
                "Begin your reply with the total overspend: the sum of actual minus budget across the over-budget lines in those categories.",
                "Your answer should open with one number: how far the over-budget lines in those categories exceed their budgets, summed.",
            ),
        )
    )
    return d.build(" ".join(parts), f"{overspend} total overspend in {cats} for {month}; report '{title}' created.")
