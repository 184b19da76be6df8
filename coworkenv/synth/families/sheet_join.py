"""sheet_join: join an orders sheet with a CSV lookup file, aggregate over the join, record and report the result."""

from __future__ import annotations

from typing import Any

from coworkenv.spec.task import TaskSpec
from coworkenv.synth import vocab
from coworkenv.synth.draft import Draft
from coworkenv.synth.family import family

# Near-duplicate product names (ambiguity 2): a look-alike that must not be counted with the real one.
LOOKALIKE_SUFFIXES = ("pro", "mini", "refurb", "xl", "lite", "plus")
STATUSES = ("shipped", "pending", "delivered", "cancelled", "returned")
# (sheet key column, CSV key column) pairs: the same key, named differently in both sources.
PRODUCT_KEYS = [("product_code", "sku"), ("item_code", "code"), ("sku_ref", "article"), ("product_id", "item_no")]
CUSTOMER_KEYS = [("customer_id", "cust_no"), ("client_ref", "account"), ("buyer_id", "customer"), ("cust_code", "id")]


def _codes(d: Draft, prefix: str, n: int) -> list[str]:
    return [f"{prefix}-{v}" for v in d.sample(range(100, 1000), n)]


@family(
    "sheet_join",
    capabilities=("data_analysis",),
    services=("sheets", "files"),
    knobs=("effects", "distractors", "ambiguity"),
)
def sheet_join(d: Draft) -> TaskSpec:
    """Join an orders sheet with a CSV (prices or customer regions), sum a filtered total, write it to a summary sheet."""
    mode = d.pick(["price", "region"])
    status = d.pick(STATUSES[:3])
    n_targets = 1 + (d.knobs.effects - 1) // 2  # 1, 1, 2, 2, 3 summary cells to fill
    sheet = d.pick(["orders", "order_log", "sales_orders", "orders_export"])
    summary = d.pick(["summary", "dashboard", "kpis", "report"])
    n_orders = 8 + 2 * d.knobs.distractors

    if mode == "price":
        sheet_key, csv_key = d.pick(PRODUCT_KEYS)
        names = d.sample(vocab.PRODUCTS, 3 + n_targets + d.knobs.distractors // 4)
        targets = names[:n_targets]
        labels = list(names)
        if d.knobs.ambiguity >= 2:  # look-alikes of every target, with their own codes and prices
            labels += [f"{t} {d.pick(LOOKALIKE_SUFFIXES)}" for t in targets]
        codes = _codes(d, d.pick(["SKU", "P", "ART"]), len(labels))
        price = {c: d.amount(5, 900) for c in codes}
        label_of = dict(zip(codes, labels, strict=True))
        csv_path = f"reference/{d.pick(['price_list', 'prices', 'catalog'])}.csv"
        csv_text = f"{csv_key},product,unit_price\n" + "".join(f"{c},{label_of[c]},{price[c]}\n" for c in codes)
        columns = ["order_id", sheet_key, "qty", "status"]
    else:
        sheet_key, csv_key = d.pick(CUSTOMER_KEYS)
        regions = d.sample(vocab.REGIONS, 3 + n_targets)
        targets, labels = regions[:n_targets], regions
        n_customers = 5 + n_targets + d.knobs.distractors // 2
        codes = _codes(d, d.pick(["C", "CU", "ACC"]), n_customers)
        label_of = {c: regions[i] if i < len(regions) else d.pick(regions) for i, c in enumerate(codes)}
        if d.knobs.ambiguity >= 2:  # look-alike ids (C-104 vs C-1040) that belong to another region
            for c in d.sample(codes[:n_targets], n_targets):
                twin = f"{c}{d.amount(0, 9)}"
                label_of[twin] = d.pick([r for r in regions if r != label_of[c]])
                codes.append(twin)
        csv_path = f"reference/{d.pick(['customers', 'accounts', 'customer_regions'])}.csv"
        csv_text = f"{csv_key},company,region\n" + "".join(
            f"{c},{d.pick(vocab.COMPANIES)} {d.pick(['Ltd', 'GmbH', 'Inc', 'SA'])},{label_of[c]}\n" for c in codes
        )
        columns = ["order_id", sheet_key, "amount", "status"]

    # Lookup rows nobody ordered (discontinued products, dormant customers): they join with nothing.
    for code in _codes(d, "Z", d.knobs.distractors // 3):
        label = d.pick([p for p in vocab.PRODUCTS if p not in labels]) if mode == "price" else d.pick(vocab.REGIONS)
        extra = (
            f"{code},{label},{d.amount(5, 900)}" if mode == "price" else f"{code},{d.pick(vocab.COMPANIES)} Ltd,{label}"
        )
        csv_text += extra + "\n"
    # Orders: every code appears at least once; some reference codes missing from the CSV (they do not join).
    orphan_codes = _codes(d, "X", max(1, d.knobs.distractors // 3))
    rows: list[list[Any]] = []
    order_ids = d.sample(range(10000, 99999), n_orders + len(orphan_codes))
    for i in range(n_orders + len(orphan_codes)):
        code = orphan_codes[i - n_orders] if i >= n_orders else (codes[i] if i < len(codes) else d.pick(codes))
        value = d.amount(1, 40) if mode == "price" else d.amount(50, 9000, 5)
        row_status = status if d.chance(0.55) else d.pick(STATUSES)
        rows.append([f"SO-{order_ids[i]}", code, value, row_status])
    d.rng.shuffle(rows)

    def total(label: str) -> float:
        hits = [r for r in rows if r[3] == status and label_of.get(r[1]) == label]
        return float(sum(r[2] * price[r[1]] for r in hits) if mode == "price" else sum(r[2] for r in hits))

    # Make sure every asked total is non-zero: one more matching order if needed.
    for t in targets:
        if total(t) == 0:
            code = next(c for c in codes if label_of[c] == t)
            rows.append(
                [
                    f"SO-{d.amount(100000, 999999)}",
                    code,
                    d.amount(1, 40) if mode == "price" else d.amount(50, 9000, 5),
                    status,
                ]
            )
    d.add_sheet(sheet, columns, rows)
    d.add_file(csv_path, csv_text)
    if d.knobs.distractors >= 6:  # a stale copy of the lookup file (other values) that must not be used
        stale = [line.rsplit(",", 1) for line in csv_text.splitlines()[1:]]
        stale_text = (
            csv_text.splitlines()[0]
            + "\n"
            + "".join(f"{head},{d.amount(5, 900) if mode == 'price' else d.pick(vocab.REGIONS)}\n" for head, _ in stale)
        )
        d.add_file(csv_path.replace("reference/", "archive/").replace(".csv", "_old.csv"), stale_text)
    d.add_file("README.md", f"# {d.company} shared drive\nReference data lives in reference/.\n")

    what = "revenue (quantity times unit price)" if mode == "price" else "order amount"
    metric_of = {t: f"{status} {'revenue' if mode == 'price' else 'amount'} - {t}" for t in targets}
    # Summary sheet: the rows to fill (empty) between finished rows that must keep their values.
    old_metrics = [f"{d.pick(['open', 'overdue', 'refunded'])} orders", "last refresh"]
    summary_rows = [[m, d.amount(1, 500)] for m in old_metrics[:1]] + [[metric_of[t], ""] for t in targets]
    summary_rows.append([old_metrics[1], d.pick(["yesterday", "last week", "monday"])])
    d.add_sheet(summary, ["metric", "value"], summary_rows)

    if d.knobs.ambiguity >= 1:
        d.call("sheets_list")
        d.call("files_list", dir="reference")
    d.call("sheets_read", sheet=sheet)
    d.call("files_read", path=csv_path)
    d.call("sheets_read", sheet=summary)
    results = {t: total(t) for t in targets}
    for t in targets:
        row = next(i for i, r in enumerate(summary_rows) if r[0] == metric_of[t])
        d.call("sheets_update", sheet=summary, row=row, column="value", value=results[t])
        d.check(
            "sheet_cell",
            weight=1.5,
            id=f"summary-{t.replace(' ', '-')}",
            sheet=summary,
            match={"metric": metric_of[t]},
            column="value",
            value=results[t],
            tol=0.01,
        )
    d.check("answer_number", weight=2.0, id="answer", value=results[targets[0]], tol=0.01)
    d.check(
        "sheet_cell",
        weight=0.5,
        id="summary-kept",
        sheet=summary,
        match={"metric": old_metrics[0]},
        column="value",
        value=float(summary_rows[0][1]),
    )
    d.check("unchanged", weight=0.5, id="lookup-untouched", path=csv_path)
    d.allow("sheets_append")
    d.forbid("sheets_update", "the orders sheet is the system of record", sheet=sheet)
    d.forbid("sheets_append", "the orders sheet is the system of record", sheet=sheet)

    # How the join is described: explicit column names at ambiguity 0, left to the agent otherwise.
    label_word = "product" if mode == "price" else "region"
    if d.knobs.ambiguity == 0:
        source = d.variant(
            "the '{sheet}' sheet with {csv} (match the sheet's {sk} to the CSV's {ck})",
            "'{sheet}' joined to {csv} on {sk} = {ck}",
            "the '{sheet}' sheet and the lookup file {csv} (its {ck} column is the sheet's {sk})",
            sheet=sheet,
            csv=csv_path,
            sk=sheet_key,
            ck=csv_key,
            held_out=(
                "the '{sheet}' sheet combined with {csv}, matching {sk} in the sheet to {ck} in the CSV",
                "'{sheet}' plus {csv}, linked by the sheet's {sk} and the CSV's {ck}",
            ),
        )
    else:
        lookup = "price list" if mode == "price" else "customer list with regions"
        source = d.variant(
            "the orders sheet and the {lookup} under reference/",
            "our orders sheet together with the {lookup} CSV in reference/",
            "the order data plus the {lookup} kept in reference/",
            "the {kind} orders sheet and the matching {lookup} (a CSV somewhere in reference/)",
            "whichever sheet holds our orders, joined with the {lookup} in reference/",
            lookup=lookup,
            kind=d.pick(["latest", "current", "live"]),
            held_out=(
                "the orders sheet combined with the {lookup} file in reference/",
                "our {kind} orders sheet and the {lookup} stored under reference/",
            ),
        )
    names = ", ".join(f"'{t}'" for t in targets)
    plural = f"each {label_word} ({names})" if len(targets) > 1 else f"the {label_word} '{targets[0]}'"
    ask = d.variant(
        "Using {source}, compute the total {what} of {status} orders for {plural}.",
        "Work out the {what} of all {status} orders for {plural} from {source}.",
        "I need the {what} of the {status} orders for {plural}; use {source}.",
        "Can you total the {what} over {status} orders for {plural}? The data is in {source}.",
        "Please sum up the {what} for {plural}, counting only {status} orders, from {source}.",
        "From {source}: what is the {what} of the {status} orders for {plural}?",
        source=source,
        what=what,
        status=status,
        plural=plural,
        held_out=(
            "Calculate the total {what} of the {status} orders for {plural}, using {source}.",
            "What's the {what} across {status} orders for {plural}? Work it out from {source}.",
            "Could you add up the {what} of {status} orders for {plural} based on {source}?",
        ),
    )
    cells = d.variant(
        "Put {it} into the '{summary}' sheet's value column on the matching metric row{s}",
        "Fill in the value for the matching metric row{s} of the '{summary}' sheet",
        "Record {it} in '{summary}' (column value, the row{s} named after the metric)",
        "Then update the '{summary}' sheet: the value cell{s} of the matching metric row{s}",
        it="them" if len(targets) > 1 else "it",
        summary=summary,
        s="s" if len(targets) > 1 else "",
        held_out=(
            "Write {it} into the value column of the '{summary}' sheet, on the metric row{s} that match",
            "Enter {it} in the '{summary}' sheet (value column, matching metric row{s})",
        ),
    )
    first = f" (the '{targets[0]}' figure)" if len(targets) > 1 else ""
    instruction = f"{ask} {cells}, and reply with the number{first} first."
    answer = "; ".join(f"{d.number(results[t])} for {t}" for t in targets)
    return d.build(instruction, f"{answer} ({status} orders), written to {summary}.")
