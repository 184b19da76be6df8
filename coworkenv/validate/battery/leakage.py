"""Battery check `no_leakage`: expected answers and hidden user facts must not appear in the instruction."""

from __future__ import annotations

import re
from datetime import date
from typing import Any

from coworkenv.checks import CHECKS
from coworkenv.checks.text import PLAIN_NUMBER, number_find, phrase_find
from coworkenv.spec.task import TaskSpec
from coworkenv.validate.battery.context import CheckResultT, Context, battery_check

MIN_FACT_CHARS = 2
"""Shorter string facts are not looked for in the instruction."""
_MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
_ISO_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})(?:[T ][\d:.]+(?:Z|[+-]\d{2}:?\d{2})?)?$")


def _date_renderings(value: str) -> list[str]:
    m = _ISO_DATE.match(value.strip())
    if not m:
        return []
    try:
        d = date(int(m[1]), int(m[2]), int(m[3]))
    except ValueError:
        return []
    month, mon = _MONTHS[d.month - 1], _MONTHS[d.month - 1][:3]
    return [d.isoformat(), f"{d.day} {month}", f"{month} {d.day}", f"{d.day} {mon}", f"{mon} {d.day}"]


def _workspace_text(spec: TaskSpec) -> str:
    out: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                out.append(str(k))
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)
        elif node is not None:
            out.append(str(node))

    walk(spec.initial_state)
    return "\n".join(out).lower()


def _fact_values(value: Any, key: str) -> list[tuple[str, Any]]:
    if isinstance(value, dict):
        return [item for k, v in value.items() for item in _fact_values(v, f"{key}.{k}")]
    if isinstance(value, list | tuple):
        return [item for i, v in enumerate(value) for item in _fact_values(v, f"{key}[{i}]")]
    return [(key, value)]


def leaks(spec: TaskSpec) -> list[dict[str, Any]]:
    """What of the expected answers and hidden user facts the instruction gives away.

    * every check whose kind can leak (the answer checks) says what it finds in the instruction: see the `leaks`
      hooks of `answer_number` and `answer_contains`; numbers are compared as numbers, texts as whole words/phrases.
    * `user.facts`: facts are hidden by definition, so every value (lists and dicts element by element; booleans
      and nulls skipped) leaks when it occurs in the instruction: numbers (and numeric strings) as numbers, strings
      of ≥ 2 characters as whole words/phrases, and ISO dates also as "3 December", "December 3", "3 Dec", "Dec 3".
    """
    instruction = spec.instruction
    found: list[dict[str, Any]] = []
    workspace: list[str] = []

    def workspace_text() -> str:
        if not workspace:
            workspace.append(_workspace_text(spec))
        return workspace[0]

    for check in spec.checks:
        hook = CHECKS.get(check.kind).leaks
        if hook is not None:
            found += hook(check, instruction, workspace_text)
    if spec.user is not None:
        for name, fact in spec.user.facts.items():
            for key, value in _fact_values(fact, name):
                if value is None or isinstance(value, bool):
                    continue
                text = " ".join(str(value).split())
                if isinstance(value, int | float) or PLAIN_NUMBER.match(text):
                    try:
                        number = (
                            float(value)
                            if isinstance(value, int | float)
                            else float(text.lstrip("$€£").replace(",", ""))
                        )
                    except OverflowError:  # an integer beyond float range: nothing in an instruction equals it
                        continue
                    hit = number_find(number, instruction, 0.0)
                else:
                    renderings = ([text] if len(text) >= MIN_FACT_CHARS else []) + _date_renderings(text)
                    hit = next((h for h in (phrase_find(r, instruction) for r in renderings) if h is not None), None)
                if hit is not None:
                    found.append({"source": "user.facts", "fact": key, "value": value, "found": hit})
    return found


@battery_check("no_leakage")
def check_leakage(ctx: Context) -> CheckResultT:
    found = leaks(ctx.spec)
    if not found:
        return True, {"leaks": []}, "the instruction gives away no expected answer and no hidden user fact"
    what = "; ".join(f"{f['source']} {f.get('check') or f.get('fact')}: {f['value']!r}" for f in found[:5])
    return False, {"leaks": found}, f"the instruction gives away {len(found)} expected value(s): {what}"
