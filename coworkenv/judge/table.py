"""Judge verdicts as data, so they can cross into the sandbox (docs/design/contracts.md, "Judge").

The sandbox has no network and a cleared environment, so no judge can be reached from inside it. The trusted parent
asks its judge for the (criteria, text) pairs a job will need (`ask_all`) and ships the answers as a table of
`TableRow`s in the job's payload; inside, a `TableJudge` answers from that table and says "not graded" for any other
pair, remembering it in `missed` so the parent can ask for it and run the job again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from coworkenv.judge.endpoint import JudgeLike, Verdict, using_judge

Pair = tuple[str, str]
"""(criteria, judged text)."""

NO_VERDICT = "not graded: no verdict for this text in the judge table (the sandbox cannot reach the judge)"
ASK_CONCURRENCY = 4
"""Verdicts the parent asks for at once: each is one request, and the judge's cache makes repeats free."""
MAX_MISSED = 200
"""Pairs one job may report as missed: more is no task of ours, and the parent would pay for each."""

Report = Callable[[int, Any], None]
"""(item index, result): one item's job result."""


class TableRow(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    criteria: str = Field(description="The rubric's criteria, verbatim.")
    text: str = Field(description="The judged text, verbatim.")
    passed: bool | None = Field(description="The judge's verdict; None: the judge could not grade it.")
    reason: str = Field(description="The verdict's reason.")


class TableJudge:
    """A judge that only knows the verdicts it was given (the `JudgeLike` protocol)."""

    def __init__(self, rows: Iterable[TableRow]):
        self.rows = {(r.criteria, r.text): r for r in rows}
        self.missed: dict[Pair, None] = {}
        """The pairs asked for that the table lacks, in the order first asked."""

    def __repr__(self) -> str:
        return f"TableJudge({len(self.rows)} verdicts)"

    def verdict(self, criteria: str, text: str) -> Verdict:
        row = self.rows.get((criteria, text))
        if row is None:
            self.missed[(criteria, text)] = None
            return Verdict(passed=None, reason=NO_VERDICT)
        return Verdict(passed=row.passed, reason=row.reason, cached=True)


def ask_all(judge: JudgeLike, pairs: Iterable[Pair], concurrency: int = ASK_CONCURRENCY) -> list[TableRow]:
    """The judge's verdict on each distinct pair, in first-seen order; a few requests at a time."""
    unique = list(dict.fromkeys(pairs))
    if not unique:
        return []
    with ThreadPoolExecutor(max(1, min(concurrency, len(unique)))) as pool:
        verdicts = list(pool.map(lambda pair: judge.verdict(*pair), unique))
    return [
        TableRow(criteria=c, text=t, passed=v.passed, reason=v.reason)
        for (c, t), v in zip(unique, verdicts, strict=True)
    ]


def rows_json(rows: Sequence[TableRow]) -> list[dict[str, Any]]:
    return [r.model_dump(mode="json") for r in rows]


def rows_from_json(data: Any) -> list[TableRow]:
    """The table of a payload; anything that is not a list of rows is an error (the parent wrote it)."""
    if not isinstance(data, list):
        raise ValueError("the judge table is not a list")
    return [TableRow.model_validate(row) for row in data]


def missed_json(table: TableJudge) -> list[list[str]]:
    """What a job returns as `missed`: the pairs its table lacked, at most `MAX_MISSED`."""
    return [list(pair) for pair in list(table.missed)[:MAX_MISSED]]


def play_judged(verdicts: Any, work: Callable[[], Any]) -> tuple[Any, list[list[str]]]:
    """Inside a job: `work()` with a `TableJudge` of the payload's `verdicts` installed; its result and `missed_json`."""
    table = TableJudge(rows_from_json(verdicts))
    with using_judge(table):
        result = work()
    return result, missed_json(table)


def missed_from_json(data: Any) -> list[Pair]:
    """The `missed` of a job's output (the job ran the task's code: anything malformed is no pair), at most `MAX_MISSED`."""
    if not isinstance(data, list):
        return []
    pairs = [(m[0], m[1]) for m in data if isinstance(m, list) and len(m) == 2 and all(isinstance(x, str) for x in m)]
    return pairs[:MAX_MISSED]


def run_judged(
    wanted: Sequence[Sequence[Pair]],
    judge: JudgeLike,
    run: Callable[[list[int], list[list[TableRow]], Report], None],
    missed_of: Callable[[Any], list[Pair]],
    done: Report,
) -> None:
    """Sandbox jobs with verdict tables: item i's job gets the judge's verdicts on `wanted[i]`; an item whose job
    missed pairs (`missed_of(result)`) runs once more with those verdicts too, and its second result is final.

    `run(indices, tables, report)` runs the jobs of those items, table k for item `indices[k]`, and calls
    `report(index, result)` for each as it finishes; `done(index, result)` gets each item's final result."""
    table = {(r.criteria, r.text): r for r in ask_all(judge, (pair for pairs in wanted for pair in pairs))}
    missed: dict[int, list[Pair]] = {}

    def first(index: int, result: Any) -> None:
        pairs = missed_of(result)
        if pairs:
            missed[index] = pairs
        else:
            done(index, result)

    run(list(range(len(wanted))), [[table[pair] for pair in pairs] for pairs in wanted], first)
    if not missed:
        return
    again = sorted(missed)
    table.update({(r.criteria, r.text): r for r in ask_all(judge, (pair for i in again for pair in missed[i]))})
    run(again, [[table[pair] for pair in dict.fromkeys([*wanted[i], *missed[i]])] for i in again], done)
