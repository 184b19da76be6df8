"""Battery check `no_leakage`: expected answers and hidden user facts must not appear in the instruction."""

from __future__ import annotations

import re
from datetime import date
from typing import Any

from coworkenv.spec.task import TaskSpec
from coworkenv.validate.battery.context import MIN_ANSWER_CHARS, MIN_FACT_CHARS, CheckResultT, Context, battery_check

# --- leakage -----------------------------------------------------------------------------------------------

# A number standing on its own: not part of a word, an identifier (INC-4471, v2, q3.csv), a date or a time.
_NUMBER_TOKEN = re.compile(r"(?<![\w.,:/-])[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\w:/]|[.,-]\d)")
_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"]
_ISO_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})(?:[T ][\d:.]+(?:Z|[+-]\d{2}:?\d{2})?)?$")
_PLAIN_NUMBER = re.compile(r"^[$€£]?[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?$")


def numbers_in(text: str) -> list[float]:
    return [float(m.group().replace(",", "")) for m in _NUMBER_TOKEN.finditer(text)]


def _phrase_find(phrase: str, text: str) -> str | None:
    """The first whole-word/phrase occurrence (case-insensitive, any whitespace between words), as written."""
    words = phrase.strip().split()
    if not words:
        return None
    body = r"\s+".join(re.escape(w) for w in words)
    left = r"(?<!\w)" if re.match(r"\w", words[0]) else ""
    right = r"(?!\w)" if re.search(r"\w$", words[-1]) else ""
    match = re.search(left + body + right, text, re.IGNORECASE)
    return match.group() if match else None


def _number_find(value: float, text: str, tol: float) -> str | None:
    """The first stand-alone number in `text` within `tol` of `value`, as written."""
    slack = max(tol, 1e-9 * max(1.0, abs(value)))
    for match in _NUMBER_TOKEN.finditer(text):
        if abs(float(match.group().replace(",", "")) - value) <= slack:
            return match.group()
    return None


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

    * `answer_number`: any stand-alone number in the instruction (any rendering: 1234, 1,234, 1234.50, $1,234)
      within the check's `tol` of the expected value. Numbers inside identifiers, dates and times do not count.
    * `answer_contains` (`text` and each `any_of` option) of ≥ 3 characters that occurs in the instruction as a
      whole word or phrase, case-insensitively, and carries information the agent has to find out: it contains a
      digit (figures, dates, ids), or an `@` (an address), or it is a phrase of two or more words that also occurs
      in the workspace (a name, a title). A single alphabetic word is exempt: it is either the instruction's own
      vocabulary (the 'phishing' folder it asks for) or one of the choices it lays out, and a check on it tests
      that the answer reports, not that the agent retrieved anything.
    * `user.facts`: facts are hidden by definition, so every value (lists and dicts element by element; booleans
      and nulls skipped) leaks when it occurs in the instruction: numbers (and numeric strings) as numbers, strings
      of ≥ 2 characters as whole words/phrases, and ISO dates also as "3 December", "December 3", "3 Dec", "Dec 3".
    """
    instruction = spec.instruction
    found: list[dict[str, Any]] = []
    workspace: str | None = None
    for check in spec.checks:
        if check.kind == "answer_number":
            hit = _number_find(check.value, instruction, check.tol)
            if hit is not None:
                found.append({"source": "answer_number", "check": check.id, "value": check.value, "found": hit})
        elif check.kind == "answer_contains":
            for option in [check.text] if check.text is not None else list(check.any_of or []):
                text = " ".join(option.split())
                hit = _phrase_find(text, instruction) if len(text) >= MIN_ANSWER_CHARS else None
                if hit is None:
                    continue
                informative = any(ch.isdigit() for ch in text) or "@" in text
                if not informative and len(text.split()) >= 2:
                    workspace = _workspace_text(spec) if workspace is None else workspace
                    informative = text.lower() in workspace
                if informative:
                    found.append({"source": "answer_contains", "check": check.id, "value": option, "found": hit})
    if spec.user is not None:
        for name, fact in spec.user.facts.items():
            for key, value in _fact_values(fact, name):
                if value is None or isinstance(value, bool):
                    continue
                text = " ".join(str(value).split())
                if isinstance(value, int | float) or _PLAIN_NUMBER.match(text):
                    try:
                        number = float(value) if isinstance(value, int | float) else float(text.lstrip("$€£").replace(",", ""))
                    except OverflowError:  # an integer beyond float range: nothing in an instruction equals it
                        continue
                    hit = _number_find(number, instruction, 0.0)
                else:
                    renderings = ([text] if len(text) >= MIN_FACT_CHARS else []) + _date_renderings(text)
                    hit = next((h for h in (_phrase_find(r, instruction) for r in renderings) if h is not None), None)
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
