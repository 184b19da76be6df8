"""Reading text the way checks and the battery do: numbers standing on their own, whole words and phrases."""

from __future__ import annotations

import re
from typing import Any

FIRST_NUMBER = re.compile(r"(?:(?<![\w-])[-+])?(?:(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|\.\d+)")
"""What `answer_number` reads: a sign counts only where it cannot be a hyphen inside a word ("INV-2291", "COVID-19")."""

NUMBER_TOKEN = re.compile(r"(?<![\w.,:/-])[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\w:/]|[.,-]\d)")
"""A number standing on its own: not part of a word, an identifier (INC-4471, v2, q3.csv), a date or a time."""

MONEY_TOKEN = re.compile(r"(?<![\w.,:/-])[$€£]?[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\w:/]|[.,-]\d)")
"""`NUMBER_TOKEN` with an optional currency sign in front."""

PLAIN_NUMBER = re.compile(r"^[$€£]?[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?$")
"""A whole string that is a number (a fact like "$1,200")."""


SCALE_WORDS = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12}
SCALE_ABBREVIATIONS = {"k": 1e3, "m": 1e6, "mn": 1e6, "b": 1e9, "bn": 1e9}
"""An amount's scale: a word after it always counts ("3.25 billion"); an abbreviation only on an amount of money
("$3.25B", "€40k"), since "5m" alone may be metres."""

AMOUNT_TOKEN = re.compile(
    r"(?<![\w.,:/-])(?P<currency>[$€£])?(?P<number>[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)"
    r"(?:(?P<abbreviation>k|K|mn|bn|M|B)(?![\w]))?(?![\w:/]|[.,-]\d)"
)
"""`MONEY_TOKEN` that may carry a scale abbreviation: how an answer writes one amount many ways."""

_SCALE_WORD = re.compile(r"[ \t]?(thousand|million|billion|trillion)\b", re.IGNORECASE)


def amount_value(text: str, match: re.Match[str]) -> float:
    """The value of an `AMOUNT_TOKEN` match in `text`, its scale applied: $3.25B = $3.25 billion = 3,250,000,000."""
    value = float(match.group("number").replace(",", ""))
    word = _SCALE_WORD.match(text, match.end())
    if word is not None:
        return value * SCALE_WORDS[word.group(1).lower()]
    if match.group("abbreviation") and match.group("currency"):
        return value * SCALE_ABBREVIATIONS[match.group("abbreviation").lower()]
    return value


def amounts_in(text: str) -> list[float]:
    """The numbers standing on their own in `text` (as `numbers_in`), each with its scale applied."""
    return [
        amount_value(text, m) for m in AMOUNT_TOKEN.finditer(text) if m.group("currency") or not m.group("abbreviation")
    ]


_ABBREVIATION = re.compile(r"(k|K|mn|bn|M|B)(?!\w)")


def first_amount(text: str) -> float | None:
    """The first number of `text` (`FIRST_NUMBER`), its scale applied as `amount_value` applies it."""
    match = FIRST_NUMBER.search(text)
    if match is None:
        return None
    value = float(match.group().replace(",", ""))
    word = _SCALE_WORD.match(text, match.end())
    if word is not None:
        return value * SCALE_WORDS[word.group(1).lower()]
    abbreviation = _ABBREVIATION.match(text, match.end())
    if abbreviation is not None and match.start() > 0 and text[match.start() - 1] in "$€£":
        return value * SCALE_ABBREVIATIONS[abbreviation.group(1).lower()]
    return value


def first_number(text: str) -> float | None:
    match = FIRST_NUMBER.search(text)
    return float(match.group().replace(",", "")) if match else None


def numbers_in(text: str) -> list[float]:
    """The numbers standing on their own in `text`."""
    return [float(m.group().replace(",", "")) for m in NUMBER_TOKEN.finditer(text)]


def number_find(value: float, text: str, tol: float) -> str | None:
    """The first stand-alone number in `text` within `tol` of `value`, as written."""
    slack = max(tol, 1e-9 * max(1.0, abs(value)))
    for match in NUMBER_TOKEN.finditer(text):
        if abs(float(match.group().replace(",", "")) - value) <= slack:
            return match.group()
    return None


def phrase_pattern(phrase: str) -> str:
    """A regex for the phrase as whole words, any whitespace between them (a non-empty phrase)."""
    words = phrase.strip().split()
    body = r"\s+".join(re.escape(w) for w in words)
    left = r"(?<!\w)" if re.match(r"\w", words[0]) else ""
    right = r"(?!\w)" if re.search(r"\w$", words[-1]) else ""
    return left + body + right


def phrase_find(phrase: str, text: str) -> str | None:
    """The first whole-word/phrase occurrence (case-insensitive), as written."""
    words = phrase.split()
    if not words or sum(map(len, words)) > len(text):  # cannot occur: spare compiling a pattern as long as the phrase
        return None
    match = re.search(phrase_pattern(phrase), text, re.IGNORECASE)
    return match.group() if match else None


def as_list(value: str | list[str] | None) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


def as_number(value: Any) -> float | None:
    """A cell value as a number: numbers as they are, text like "1,500.00" or "$4,000" parsed; else None."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return float(value)
    try:
        return float(str(value).strip().replace(",", "").lstrip("$€£"))
    except ValueError:
        return None


def normalized_text(text: str) -> str:
    """Trailing whitespace of every line and of the whole text ignored."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def added_lines(before: str | None, after: str) -> list[str]:
    """Non-blank lines of `after` (stripped) that `before` does not have."""
    old = {line.strip() for line in (before or "").splitlines()}
    return [line.strip() for line in after.splitlines() if line.strip() and line.strip() not in old]


def glob_literal(value: Any) -> Any:
    """A value that glob matching (`value_matches`) treats literally."""
    if isinstance(value, str):
        return re.sub(r"([\[*?])", r"[\1]", value)
    return value


# --- negation ------------------------------------------------------------------------------------------------

_CLAUSE_END = re.compile(
    r"[.;:!?\n()\[\]{},\u2014\u2013]|(?<!\w)(?:but|however|although|though|whereas|while|yet|so|then|instead(?!\s+of))(?!\w)",
    re.IGNORECASE,
)
"""Where a clause ends: punctuation (a comma included), or a word that turns the sentence ("not Lyon but Paris")."""

_NEGATION_BEFORE = re.compile(
    r"(?<!\w)(?:not|no|never|none|nor|neither|without|cannot|instead\s+of|rather\s+than|other\s+than|except|excluding"
    r"|avoid(?:ing)?|against|reject(?:ed|ing)?|rule[sd]?\s+out|\w+n['\u2019]t)(?!\w)",
    re.IGNORECASE,
)
_NOT_A_NEGATION = re.compile(
    r"(?:no|without)\s+(?:a\s+)?(?:doubt|question)|not\s+(?:only|just)|no\s+matter|nothing\s+but", re.IGNORECASE
)

_AUX = (
    r"(?:is|are|was|were|be|been|would|will|should|could|can|may|might|must|shall|does|do|did|has|have|had|really"
    r"|definitely|certainly|probably|clearly|also|simply|seems?|looks?)"
)
_NEGATION_AFTER = re.compile(
    rf"(?:\s+{_AUX}){{1,3}}\s+(?:not|never|no\s+longer|rejected|excluded|ruled\s+out)(?!\w)|(?:\s+{_AUX}){{0,3}}\s+\w+n['\u2019]t(?!\w)",
    re.IGNORECASE,
)

_CLAUSE_WINDOW = 300
"""Characters looked at before an occurrence: a clause is shorter, and the look stays cheap on long answers."""


def negated(text: str, start: int, end: int) -> bool:
    """Whether the occurrence `text[start:end]` is negated within its clause.

    A clause runs between punctuation marks (commas included) or turning words (but, however, although, instead, so,
    then, yet, while, whereas). The occurrence is negated when its clause, before it, holds a negation — not, no,
    never, none, nor, neither, without, cannot, any n't word (isn't, don't, won't), instead of, rather than, other
    than, except, excluding, avoid, against, reject(ed), rule(d) out — other than the idioms "no doubt", "no question",
    "not only", "not just", "no matter", "nothing but"; or when it is the subject of a negated predicate right after it
    ("Paris is not", "Paris isn't", "Paris was ruled out"). So "we should not choose Paris", "Lyon, not Paris" and
    "Paris is not an option" negate Paris; "Lyon is not an option, pick Paris" and "not Lyon but Paris" do not.
    """
    before = text[max(0, start - _CLAUSE_WINDOW) : start]
    clause_start = 0
    for boundary in _CLAUSE_END.finditer(before):
        clause_start = boundary.end()
    clause = before[clause_start:]
    for cue in _NEGATION_BEFORE.finditer(clause):
        if not _NOT_A_NEGATION.match(clause, cue.start()):
            return True
    after = text[end : end + _CLAUSE_WINDOW // 3]
    return _NEGATION_AFTER.match(after) is not None


def mention(phrase: str, text: str, *, whole_word: bool = True, not_negated: bool = False) -> str | None:
    """The first occurrence of `phrase` in `text` (case-insensitive), as written: as whole words (any whitespace
    between them) or, without `whole_word`, anywhere; with `not_negated`, the first one `negated` lets count."""
    words = phrase.split()
    if not words or sum(map(len, words)) > len(text):
        return None
    pattern = phrase_pattern(phrase) if whole_word else re.escape(phrase)
    for match in re.finditer(pattern, text, re.IGNORECASE):
        if not not_negated or not negated(text, match.start(), match.end()):
            return match.group()
    return None
