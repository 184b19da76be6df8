"""Judge verdicts as data, so they can cross into the sandbox (docs/architecture.md, "Judge").

The sandbox has no network and a cleared environment, so no judge can be reached from inside it. The trusted parent
asks its judge for the (criteria, text) pairs a job will need (`ask_all`) and ships the answers as a table of
`TableRow`s in the job's payload; inside, a `TableJudge` answers from that table and says "not graded" for any other
pair, remembering it in `missed` so the parent can ask for it and run the job again.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from coworkenv.llm.judge import JudgeLike, Verdict

Pair = tuple[str, str]
"""(criteria, judged text)."""

NO_VERDICT = "not graded: no verdict for this text in the judge table (the sandbox cannot reach the judge)"
ASK_CONCURRENCY = 4
"""Verdicts the parent asks for at once: each is one request, and the judge's cache makes repeats free."""


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
    return [TableRow(criteria=c, text=t, passed=v.passed, reason=v.reason) for (c, t), v in zip(unique, verdicts, strict=True)]


def rows_json(rows: Sequence[TableRow]) -> list[dict[str, Any]]:
    return [r.model_dump(mode="json") for r in rows]


def rows_from_json(data: Any) -> list[TableRow]:
    """The table of a payload; anything that is not a list of rows is an error (the parent wrote it)."""
    if not isinstance(data, list):
        raise ValueError("the judge table is not a list")
    return [TableRow.model_validate(row) for row in data]
