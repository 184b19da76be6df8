"""multi_turn_expense: log an expense whose amount (and at more rounds date and category) only the user knows."""

from __future__ import annotations

from datetime import timedelta

from coworkenv.spec.task import TaskSpec
from coworkenv.synth import vocab
from coworkenv.synth.draft import Draft
from coworkenv.synth.family import family

CATEGORIES = ["travel", "meals", "lodging", "software", "office supplies", "training", "client entertainment"]
COLUMNS = ["date", "employee", "description", "category", "amount_eur", "status"]

# Per fact: keywords that make the scripted user reveal it, keywords the asked_user check accepts, the oracle's questions.
ASK = {
    "amount": (
        ["amount", "how much", "cost", "total", "price", "spent"],
        ["amount", "how much", "cost", "total", "price", "spent"],
        ["How much was it, in EUR?", "What was the total amount?", "How much did it cost?"],
    ),
    "date": (
        ["date", "when", "which day", "what day"],
        ["date", "when", "day"],
        ["Which day was it on?", "When was that?", "What date should I put?"],
    ),
    "category": (
        ["category", "type of expense", "kind of expense"],
        ["category", "type of expense", "kind of expense"],
        ["Which category should I book it under?", "What kind of expense is it for the sheet's category column?"],
    ),
}


def _item(d: Draft) -> tuple[str, str]:
    """A description and the category it belongs to."""
    city, _tz = d.pick(vocab.CITIES)
    return d.pick(
        [
            (f"taxi to the airport in {city}", "travel"),
            (f"train ticket to {city}", "travel"),
            (f"flight to {city}", "travel"),
            (f"hotel night in {city}", "lodging"),
            (f"{d.pick(vocab.TEAMS)} team lunch", "meals"),
            (f"working dinner in {city}", "meals"),
            (f"client dinner with {d.pick(vocab.COMPANIES)}", "client entertainment"),
            (f"{d.pick(vocab.PROJECTS)} conference ticket", "training"),
            (
                f"online course on {d.pick(['negotiation', 'SQL', 'public speaking', 'design systems', 'budgeting'])}",
                "training",
            ),
            (f"new {d.pick(vocab.PRODUCTS)} for the office", "office supplies"),
            (f"{d.pick(vocab.PROJECTS)} app subscription", "software"),
        ]
    )


@family(
    "multi_turn_expense",
    capabilities=("multi_turn", "authoring"),
    services=("sheets", "files"),
    knobs=("rounds", "distractors", "ambiguity"),
)
def multi_turn_expense(d: Draft) -> TaskSpec:
    """Append an expense row to the expenses sheet; the amount, date and category have to be asked for."""
    description, category = _item(d)
    if d.chance(0.5):  # which project it was for: more surface variety, no bearing on the row's checked cells
        description += f" for the {d.pick(vocab.PROJECTS)} project"
    back = d.amount(0, 6)
    spent_on = d.today - timedelta(days=back)
    date = spent_on.strftime("%Y-%m-%d")
    amount = d.amount(800, 45000) / 100
    hidden = ["amount", *d.sample(["date", "category"], d.knobs.rounds - 1)]
    values = {
        "amount": (
            amount,
            d.pick([f"{amount:.2f} EUR.", f"It came to {amount:.2f} EUR.", f"{amount:.2f} EUR, receipt's in my bag."]),
        ),
        "date": (date, f"{spent_on.strftime('%A')} {spent_on.day} {spent_on.strftime('%B')} ({date})."),
        "category": (category, f"Put it under {category}."),
    }
    d.ask_user(
        {name: values[name][0] for name in hidden},
        [(ASK[name][0], values[name][1]) for name in hidden],
        persona=f"{d.me['name']}, {d.me['title']}; has the receipt, answers only what is asked.",
    )

    # --- the sheet (and, at ambiguity, last year's look-alikes) ---------------------------------------------
    year = d.today.year
    sheet = "expenses" if d.knobs.ambiguity == 0 else f"expenses_{year}"
    colleagues = [d.person(in_contacts=False)["email"] for _ in range(3)]
    used_dates = {date}
    rows = []
    for _ in range(3 + d.knobs.distractors):
        for _ in range(20):  # no existing row shares the new row's date, so the check finds exactly the new one
            when = (d.today - timedelta(days=d.amount(7, 60))).strftime("%Y-%m-%d")
            if when not in used_dates:
                break
        used_dates.add(when)
        other_desc, other_cat = _item(d)
        who = d.pick([d.me["email"], *colleagues])
        rows.append(
            [when, who, other_desc, other_cat, d.amount(500, 30000) / 100, d.pick(["submitted", "approved", "paid"])]
        )
    rows.sort(key=lambda r: r[0])
    d.add_sheet(sheet, COLUMNS, rows)
    if d.knobs.ambiguity >= 1:
        d.add_sheet(
            "team_budget",
            ["category", "budget_eur", "spent_eur"],
            [[c, d.amount(1000, 9000, 100), d.amount(100, 900)] for c in d.sample(CATEGORIES, 4)],
        )
        archive = "finance/expenses_archive.csv"
        lines = [
            f"{year - 1}-{d.amount(1, 12):02d}-{d.amount(1, 28):02d},{d.me['email']},{_item(d)[0]},{d.amount(500, 9000) / 100}"
            for _ in range(2 + d.knobs.distractors // 3)
        ]
        d.add_file(archive, "date,employee,description,amount_eur\n" + "\n".join(lines) + "\n")
        d.add_file(
            "finance/README.md",
            f"Log new expenses in the sheet for the current year ({sheet}). The archive is read-only.\n",
        )
        d.check("unchanged", weight=0.5, id="archive-untouched", path=archive)
    if d.knobs.ambiguity >= 2:  # last year's sheet: same columns, wrong place
        old = [
            [
                f"{year - 1}-{d.amount(1, 12):02d}-{d.amount(1, 28):02d}",
                d.me["email"],
                _item(d)[0],
                c,
                d.amount(500, 9000) / 100,
                "paid",
            ]
            for c in d.sample(CATEGORIES, 3)
        ]
        d.add_sheet(f"expenses_{year - 1}", COLUMNS, old)

    # --- oracle ------------------------------------------------------------------------------------------
    for name in hidden:
        d.say(d.pick(ASK[name][2]))
    if d.knobs.ambiguity >= 1:
        d.call("sheets_list")
    d.call("sheets_read", sheet=sheet)
    d.call("sheets_append", sheet=sheet, row=[date, d.me["email"], description, category, amount, "submitted"])

    # --- checks: the new row, cell by cell -----------------------------------------------------------------
    for name in hidden:
        d.check("asked_user", weight=1.0, id=f"asked-{name}", about=ASK[name][1])
    row = {"sheet": sheet, "match": {"date": date}}
    d.check("sheet_cell", weight=2.0, id="row-amount", column="amount_eur", value=amount, tol=0.005, **row)
    d.check("sheet_cell", weight=1.0, id="row-category", column="category", equals=category, **row)
    d.check("sheet_cell", weight=0.5, id="row-employee", column="employee", equals=d.me["email"], **row)
    d.check("sheet_cell", weight=0.5, id="row-status", column="status", equals="submitted", **row)

    # --- instruction: only what the user would say up front --------------------------------------------------
    if "date" in hidden:
        when_text = d.pick(["from the other day", "I paid for myself", "I forgot to file", "from recently"])
    elif back == 0:
        when_text = "from today"
    elif back == 1:
        when_text = "from yesterday"
    elif spent_on.weekday() < d.today.weekday():
        when_text = f"from {spent_on.strftime('%A')} this week"
    else:
        when_text = f"from last {spent_on.strftime('%A')}"
    where = {0: f"the {sheet} sheet", 1: "my expenses sheet", 2: "this year's expenses sheet"}[d.knobs.ambiguity]
    category_text = (
        "" if "category" in hidden else d.pick([f" under {category}", f" as {category}", f" (category: {category})"])
    )
    instruction = d.variant(
        "Please log the {desc} {when}{cat} in {where}, status submitted.",
        "Add my {desc} {when} to {where}{cat}; mark it submitted.",
        "Can you put the {desc} {when} into {where}{cat}? Status should be submitted.",
        "I need the {desc} {when} recorded in {where}{cat} as a submitted expense.",
        held_out=(
            "Please record the {desc} {when} in {where}{cat} with status submitted.",
            "Could you enter my {desc} {when} into {where}{cat}? It should be marked submitted.",
            "Log my {desc} {when} in {where}{cat} and set its status to submitted.",
        ),
        desc=description,
        when=when_text,
        cat=category_text,
        where=where,
    )
    preamble = d.pick(["", "Expense admin:", "Hi!", "Quick one before I forget.", "Receipt time."])
    closer = d.pick(["", "Use the same format as the other rows.", "Ask me for whatever you need."])
    signature = d.pick(["", f"Thanks - {d.me['name'].split()[0]}", f"Cheers, {d.me['name'].split()[0]}"])
    instruction = " ".join(part for part in (preamble, instruction, closer, signature) if part)
    answer = f"Logged the {description} ({category}, {amount:.2f} EUR on {date}) in {sheet} as submitted."
    return d.build(instruction, answer)
