"""Reading text the way checks and the battery do (`checks/text.py`): the answer's first number, numbers standing on
their own, whole words and phrases, cell values as numbers, and the lines a file gained."""

from __future__ import annotations

import pytest

from coworkenv.checks.text import (
    added_lines,
    as_number,
    first_number,
    mention,
    negated,
    normalized_text,
    number_find,
    numbers_in,
    phrase_find,
)


@pytest.mark.parametrize(
    ("text", "number"),
    [
        ("1,234.50", 1234.5),
        ("-3", -3.0),
        ("+7 more", 7.0),
        ("no number", None),
        ("", None),
        ("The total is 1,234,567 units", 1234567.0),
        ("revenue was $4,000", 4000.0),
        ("ratio .5", 0.5),
        ("12 items in 3 boxes", 12.0),
        ("3.14159", 3.14159),
        ("INV-2291 is due", 2291.0),  # a hyphen inside a word is no minus sign
        ("COVID-19 cases", 19.0),
        ("it fell by -4", -4.0),
    ],
)
def test_first_number(text, number):
    assert first_number(text) == number


@pytest.mark.parametrize(
    ("text", "numbers"),
    [
        ("pay $1,250.50 or 1250 (12%) now.", [1250.5, 1250.0, 12.0]),
        ("INC-4471 on 2026-12-17 at 14:00 in q3.csv, v2", []),  # identifiers, dates, times, file names
        ("-3 and +4, then 5.", [-3.0, 4.0, 5.0]),
        ("1,2,3", []),  # a list without spaces reads as no number
    ],
)
def test_numbers_in(text, numbers):
    assert numbers_in(text) == numbers


def test_number_find_returns_the_number_as_written():
    assert number_find(1250, "the amount: 1,250.00 EUR", 0) == "1,250.00"
    assert number_find(100, "about 100.4", 0.5) == "100.4"
    assert number_find(100, "about 100.6", 0.5) is None
    assert number_find(2026, "due 2026-12-20", 0) is None


@pytest.mark.parametrize(
    ("phrase", "text", "found"),
    [
        ("north region", "The NORTH\n  region grew.", "NORTH\n  region"),  # any whitespace between the words
        ("north", "northern", None),  # whole words only
        ("acme.test", "mail ana@acme.test", "acme.test"),  # an address part is a whole word at the dot
        ("$4,000", "paid $4,000.", "$4,000"),  # no word boundary required next to a non-word character
        ("  ", "anything", None),
    ],
)
def test_phrase_find(phrase, text, found):
    assert phrase_find(phrase, text) == found


@pytest.mark.parametrize(
    ("value", "number"),
    [
        (3, 3.0),
        (2.5, 2.5),
        ("1,500.00", 1500.0),
        (" $4,000 ", 4000.0),
        ("€12", 12.0),
        ("n/a", None),
        (True, None),
        (None, None),
    ],
)
def test_as_number(value, number):
    assert as_number(value) == number


def test_normalized_text_ignores_trailing_whitespace_only():
    assert normalized_text("a  \nb\t\n\n") == normalized_text("a\nb") == "a\nb"
    assert normalized_text(" a") != normalized_text("a")


def test_added_lines_are_the_new_non_blank_lines_stripped():
    assert added_lines("a\nb\n", "a\n\n  c  \nb\nd") == ["c", "d"]
    assert added_lines(None, "x\n") == ["x"]
    assert added_lines("a\n", " a ") == []


@pytest.mark.parametrize(
    ("text", "is_negated"),
    [
        ("We should not choose Paris.", True),
        ("Paris is not an option.", True),  # the subject of a negated predicate
        ("Paris really isn't cheap.", True),
        ("Paris was ruled out.", True),
        ("I'd avoid Paris.", True),
        ("Lyon rather than Paris.", True),
        ("Never Paris.", True),
        ("Lyon is not an option, pick Paris.", False),  # the negation is in another clause
        ("Not Lyon but Paris.", False),
        ("No. Paris.", False),
        ("There is no doubt about Paris.", False),  # idioms that negate nothing
        ("Not only Paris is cheap.", False),
        ("Pick Paris not Lyon.", False),  # "not" after the occurrence negates what follows it
        ("Paris is the city I recommend.", False),
        ("Paris.", False),
    ],
)
def test_negated(text, is_negated):
    start = text.index("Paris")
    assert negated(text, start, start + len("Paris")) is is_negated


@pytest.mark.parametrize(
    ("text", "whole_word", "not_negated", "found"),
    [
        ("Parisian food, not PARIS.", False, False, "Paris"),
        ("Parisian food, not PARIS.", True, False, "PARIS"),
        ("Parisian food, not PARIS.", True, True, None),
        ("Parisian food, not PARIS.", False, True, "Paris"),  # the substring in "Parisian" is not negated
        ("Not Paris; Paris!", True, True, "Paris"),  # the second, affirmed occurrence
        ("", True, True, None),
    ],
)
def test_mention(text, whole_word, not_negated, found):
    assert mention("paris", text, whole_word=whole_word, not_negated=not_negated) == found
