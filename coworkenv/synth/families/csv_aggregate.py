"""csv_aggregate: answer a numeric question over a CSV export and record the result in a file."""

from __future__ import annotations

from coworkenv.spec.task import TaskSpec
from coworkenv.synth import vocab
from coworkenv.synth.draft import Draft
from coworkenv.synth.family import family

# (export kind, money column, count column)
DATASETS = [
    ("sales", "revenue", "units"),
    ("orders", "amount", "quantity"),
    ("shipments", "value", "boxes"),
    ("returns", "refund", "items"),
]
MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november"]


@family(
    "csv_aggregate",
    capabilities=("data_analysis",),
    services=("files",),
    knobs=("effects", "distractors", "ambiguity"),
)
def csv_aggregate(d: Draft) -> TaskSpec:
    """Sum or average a filtered column of a CSV export; at higher difficulty, write the result to a file."""
    kind, money, count = d.pick(DATASETS)
    regions = d.sample(vocab.REGIONS, 3 + d.knobs.ambiguity)
    products = d.sample(vocab.PRODUCTS, 3 + d.knobs.ambiguity)
    rows = [
        (d.pick(regions), d.pick(products), d.amount(1, 40), d.amount(100, 20000, 5))
        for _ in range(8 + 2 * d.knobs.distractors)
    ]
    region, product = rows[0][0], rows[0][1]
    by_product = d.knobs.effects >= 3
    selected = [r for r in rows if r[0] == region and (not by_product or r[1] == product)]
    metric = d.pick([money, count])
    values = [r[3] if metric == money else r[2] for r in selected]
    average = d.knobs.effects >= 4 and len(values) > 1
    result = round(sum(values) / len(values), 2) if average else sum(values)
    month, year = d.pick(MONTHS), d.pick([2024, 2025, 2026])
    header = f"region,product,{count},{money}\n"
    path = f"exports/{kind}_{year}_{month}.csv"
    d.add_file(path, header + "".join(f"{r},{p},{u},{v}\n" for r, p, u, v in rows))
    # Older exports of the same kind: same shape, wrong period.
    for other in d.sample([m for m in MONTHS if m != month], min(3, d.knobs.distractors // 3)):
        d.add_file(
            f"exports/{kind}_{year}_{other}.csv",
            header + f"{region},{product},{d.amount(1, 40)},{d.amount(100, 20000, 5)}\n",
        )
    d.add_file("README.md", f"# {d.company} shared drive\nExports land in exports/ as <kind>_<year>_<month>.csv.\n")

    where = f"in the {region} region" + (f" for {product}" if by_product else "")
    what = f"average {metric} per row" if average else f"total {metric}"
    if d.knobs.ambiguity >= 1:
        source = f"the {month.title()} {year} {kind} export (somewhere under exports/)"
        d.call("files_list", dir="exports")
    else:
        source = path
    d.call("files_read", path=path)
    number = d.number(result)
    d.check("answer_number", weight=2.0, id="answer", value=float(result), tol=0.01)
    d.check("unchanged", weight=0.5, id="export-untouched", path=path)
    write = d.knobs.effects >= 2
    out = f"reports/{region}_{metric}_{month}.txt"
    if write:
        d.call("files_write", path=out, content=f"{what} {where}: {number}\n")
        d.check("file_contains", weight=1.0, id="result-written", path=out, text=number)
    d.allow("files_delete")
    d.forbid("files_delete", "the exports are the source of record")
    requester = d.person(in_contacts=False)
    ask = d.variant(
        "{who} asked: what is the {what} {where} in {source}?",
        "From {source}, work out the {what} {where} for {who}.",
        "{who} needs the {what} {where}; the data is in {source}.",
        "Quick one from {who}: {what} {where}, based on {source}.",
        held_out=(
            "{who} wants to know the {what} {where}. Please calculate it from {source}.",
            "Can you figure out the {what} {where} using {source}? It's for {who}.",
            "Request from {who}: calculate the {what} {where} with the numbers in {source}.",
        ),
        what=what,
        where=where,
        source=source,
        who=f"{requester['name']} ({requester['team']})",
    )
    if write:
        ask += f" Write it to {out} as well."
    return d.build(ask + " Reply with the number first.", f"{number} is the {what} {where}.")
