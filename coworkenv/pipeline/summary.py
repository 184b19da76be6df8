"""What a stage tells the person reading its log (docs/design/pipeline.md, "Logs"): a few plain lines of counts, and the
most frequent reasons with an example each. Every stage logs through its module's logger at INFO: Airflow's task log
shows them; the `coworkenv` command, which prints its own summaries, configures no logging and shows none
(`coworkenv` has a NullHandler)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from coworkenv.redact import safe_message

if TYPE_CHECKING:
    from coworkenv.data.layout import Manifest
    from coworkenv.pipeline.rundir import RunDir

TOP = 5
"""Reasons a summary lists; the rest are counted."""


def counts(values: Mapping[str, Any]) -> str:
    """`tasks 10, validations 120`."""
    return ", ".join(f"{name} {value}" for name, value in values.items()) or "none"


class Reasons:
    """(code, example id, message) per rejection, kept as a count per code and the first example of each: bounded
    however many are added, so a stage that streams its tasks summarizes them all."""

    def __init__(self) -> None:
        self.by_code: Counter[str] = Counter()
        self.first: dict[str, tuple[str, str]] = {}

    def add(self, code: str, example: str, message: str) -> None:
        self.by_code[code] += 1
        self.first.setdefault(code, (example, message))

    def __bool__(self) -> bool:
        return bool(self.by_code)

    def lines(self, what: str = "task") -> list[str]:
        """One line per code, most frequent first: its count and its first example (`oracle_scores_1: 3 tasks, e.g.
        mail_triage-7: the oracle scores 0.5 …`)."""
        lines = []
        for code, n in self.by_code.most_common(TOP):
            example, message = self.first[code]
            text = safe_message(" ".join(message.split()), 200)
            lines.append(f"  {code}: {n} {what}{'s' if n != 1 else ''}, e.g. {example}" + (f": {text}" if text else ""))
        rest = len(self.by_code) - TOP
        if rest > 0:
            lines.append(
                f"  … and {rest} other code{'s' if rest != 1 else ''} ({sum(n for _, n in self.by_code.most_common()[TOP:])} {what}s)"
            )
        return lines


def top_reasons(reasons: Iterable[tuple[str, str, str]], what: str = "task") -> list[str]:
    """(code, example id, message) per rejection → `Reasons.lines`."""
    tally = Reasons()
    for reason in reasons:
        tally.add(*reason)
    return tally.lines(what)


def fields(result: Mapping[str, Any]) -> str:
    """A stage's result dict in one line: `release_id r-1, tasks 8, weakest [planning, memory]` (nested dicts as
    counts)."""

    def plain(value: Any) -> str:
        if isinstance(value, Mapping):
            return "{" + counts(value) + "}"
        if isinstance(value, list | tuple):
            return "[" + ", ".join(map(plain, value)) + "]"
        return str(value)

    return ", ".join(f"{name} {plain(value)}" for name, value in result.items())


def block(head: str, details: Iterable[str]) -> str:
    return "\n".join([head, *details])


def gates_summary(run: RunDir, stats: Mapping[str, Any]) -> str:
    """What a gate stage's command prints: each gate's expectations, and where its Data Docs are."""
    lines = [
        f"gate {stage}: {s.get('successful_expectations')}/{s.get('evaluated_expectations')} expectations hold"
        for stage, s in stats.items()
    ]
    return "\n".join([*lines, f"Data Docs: {run.file('quality', 'data_docs')}"])


def published_summary(run: RunDir, manifest: Manifest) -> str:
    """What a publish stage's command prints: the release and its row counts."""
    return f"published release {manifest.release_id}: {counts(manifest.row_counts)}"
