"""Every check kind (docs/architecture.md, "TaskSpec") as a pure function of the Evidence: a passing and a failing evidence each."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from pydantic import ValidationError

from coworkenv.checks import CHECKS, evaluate
from coworkenv.checks.matching import args_match, example_value, value_matches
from coworkenv.checks.text import first_number
from coworkenv.episode.evidence import Evidence
from coworkenv.spec import CHECK_KINDS
from tests.support.builders import check, err, evidence, ok, rich_spec

SPEC = rich_spec()

State = dict[str, Any]


def with_state(mutate: Callable[[State], None]) -> Callable[[], Evidence]:
    def build() -> Evidence:
        state = copy.deepcopy(SPEC.initial_state)
        mutate(state)
        return evidence(SPEC, state, answer="done")

    return build


def with_calls(*calls) -> Callable[[], Evidence]:
    return lambda: evidence(SPEC, calls=list(calls), answer="done")


def with_answer(answer: str, says: tuple[str, ...] = ()) -> Callable[[], Evidence]:
    return lambda: evidence(SPEC, answer=answer, says=says)


def unchanged_state() -> Evidence:
    return evidence(SPEC, answer="done")


def _set_file(path: str, content: str) -> Callable[[State], None]:
    return lambda s: s["files"].__setitem__(path, content)


def _del_file(path: str) -> Callable[[State], None]:
    return lambda s: s["files"].pop(path)


def _sent(**fields) -> Callable[[State], None]:
    message = {"id": "m99", "folder": "sent", "from": "me@acme.test", "to": [], "cc": [], "subject": "", "body": "",
               "date": "2026-12-01T09:00:01Z"} | fields
    return lambda s: s["mail"]["messages"].append(message)


def _event(**fields) -> Callable[[State], None]:
    event = {"id": "e99", "title": "", "start": "2026-12-09T14:00:00Z", "end": "2026-12-09T15:00:00Z", "attendees": [],
             "location": ""} | fields
    return lambda s: s["calendar"]["events"].append(event)


def _move(mid: str, folder: str) -> Callable[[State], None]:
    def mutate(s: State) -> None:
        next(m for m in s["mail"]["messages"] if m["id"] == mid)["folder"] = folder

    return mutate


def _ticket(tid: str, **fields) -> Callable[[State], None]:
    def mutate(s: State) -> None:
        next(t for t in s["tickets"]["tickets"] if t["id"] == tid).update(fields)

    return mutate


def _cell(sheet: str, row: int, col: int, value: Any) -> Callable[[State], None]:
    return lambda s: s["sheets"][sheet]["rows"][row].__setitem__(col, value)


def _del_event(eid: str) -> Callable[[State], None]:
    return lambda s: s["calendar"].__setitem__("events", [e for e in s["calendar"]["events"] if e["id"] != eid])


# (label, check fields, passing evidence, failing evidence)
TABLE: list[tuple[str, dict[str, Any], Callable[[], Evidence], Callable[[], Evidence]]] = [
    ("file_exists", {"kind": "file_exists", "path": "out/a.txt"}, with_state(_set_file("out/a.txt", "")), unchanged_state),
    ("file_absent", {"kind": "file_absent", "path": "archive/old.txt"}, with_state(_del_file("archive/old.txt")), unchanged_state),
    ("file_contains-text", {"kind": "file_contains", "path": "notes/todo.txt", "text": "MILK"}, unchanged_state,
     with_state(_set_file("notes/todo.txt", "buy bread"))),
    ("file_contains-missing-file", {"kind": "file_contains", "path": "notes/todo.txt", "text": "milk"}, unchanged_state,
     with_state(_del_file("notes/todo.txt"))),
    ("file_contains-case-sensitive", {"kind": "file_contains", "path": "notes/todo.txt", "text": "Milk", "case_sensitive": True},
     with_state(_set_file("notes/todo.txt", "buy Milk")), unchanged_state),
    ("file_contains-regex", {"kind": "file_contains", "path": "reports/q3.csv", "regex": r"(?m)^north,1\d\d$"}, unchanged_state,
     with_state(_set_file("reports/q3.csv", "region,revenue\nnorth,99\n"))),
    ("file_contains-regex-ci", {"kind": "file_contains", "path": "reports/q3.csv", "regex": "NORTH"}, unchanged_state,
     with_state(_set_file("reports/q3.csv", "x"))),
    ("file_equals", {"kind": "file_equals", "path": "notes/todo.txt", "content": "buy milk"},
     with_state(_set_file("notes/todo.txt", "buy milk  \n\n")), with_state(_set_file("notes/todo.txt", "buy milk!"))),
    ("file_equals-missing", {"kind": "file_equals", "path": "nope.txt", "content": ""},
     with_state(_set_file("nope.txt", "\n")), unchanged_state),
    ("csv_cell-value", {"kind": "csv_cell", "path": "reports/q3.csv", "match": {"region": "NORTH"}, "column": "revenue",
                        "value": 120.0, "tol": 0.5}, unchanged_state,
     with_state(_set_file("reports/q3.csv", "region,revenue\nnorth,121\n"))),
    ("csv_cell-equals", {"kind": "csv_cell", "path": "reports/q3.csv", "match": {"region": "south"}, "column": "revenue",
                         "equals": 80}, unchanged_state, with_state(_set_file("reports/q3.csv", "region,revenue\nsouth,eighty\n"))),
    ("csv_cell-no-row", {"kind": "csv_cell", "path": "reports/q3.csv", "match": {"region": "east"}, "column": "revenue",
                         "equals": "1"}, with_state(_set_file("reports/q3.csv", "region,revenue\neast,1\n")), unchanged_state),
    ("sheet_cell-equals", {"kind": "sheet_cell", "sheet": "budget", "match": {"item": "desks"}, "column": "amount", "equals": 1750},
     with_state(_cell("budget", 1, 1, 1750)), unchanged_state),
    ("sheet_cell-value-tol", {"kind": "sheet_cell", "sheet": "budget", "match": {"item": "desks"}, "column": "amount",
                              "value": 1500.0, "tol": 0.01}, with_state(_cell("budget", 1, 1, "1,500.00")),
     with_state(_cell("budget", 1, 1, 1500.5))),
    ("sheet_cell-missing-sheet", {"kind": "sheet_cell", "sheet": "nope", "match": {"a": 1}, "column": "a", "equals": 1},
     with_state(lambda s: s["sheets"].__setitem__("nope", {"columns": ["a"], "rows": [[1]]})), unchanged_state),
    ("mail_sent", {"kind": "mail_sent", "to": "accounting@acme.test", "subject_contains": "invoice", "body_contains": ["PAY", "7"]},
     with_state(_sent(to=["Accounting@Acme.test"], subject="Fwd: Invoice 7", body="please pay #7")),
     with_state(_sent(to=["accounting@acme.test"], subject="Fwd: Invoice 7", body="please review"))),
    ("mail_sent-glob-list", {"kind": "mail_sent", "to": ["*@acme.test", "bo@*"], "cc": "ana@acme.test"},
     with_state(_sent(to=["x@acme.test", "bo@acme.test"], cc=["ana@acme.test"])),
     with_state(_sent(to=["x@acme.test", "bo@acme.test"]))),
    ("mail_sent-count", {"kind": "mail_sent", "to": "x@acme.test", "count": 1},
     with_state(_sent(to=["x@acme.test"])),
     with_state(lambda s: (_sent(to=["x@acme.test"])(s), _sent(to=["x@acme.test"], id="m98")(s)))),
    ("mail_sent-count-zero", {"kind": "mail_sent", "to": "*@external.test", "count": 0}, unchanged_state,
     with_state(_sent(to=["leak@external.test"]))),
    ("mail_sent-initial-not-counted", {"kind": "mail_sent", "to": "me@acme.test"},
     with_state(_sent(to=["me@acme.test"])), unchanged_state),
    ("mail_in_folder", {"kind": "mail_in_folder", "ids": ["m1", "m2"], "folder": "archive"},
     with_state(lambda s: (_move("m1", "archive")(s), _move("m2", "archive")(s))), with_state(_move("m1", "archive"))),
    ("mail_in_folder-deleted", {"kind": "mail_in_folder", "ids": ["m1"], "folder": "inbox"}, unchanged_state,
     with_state(lambda s: s["mail"]["messages"].pop(0))),
    ("event_exists", {"kind": "event_exists", "title_contains": "review", "start": "2026-12-09T15:00:00+01:00",
                      "end": "2026-12-09T15:00:00Z", "attendees_include": ["Ana@acme.test"]},
     with_state(_event(title="Design Review", attendees=["ana@acme.test", "bo@acme.test"])),
     with_state(_event(title="Design Review", attendees=["bo@acme.test"]))),
    ("event_exists-instant", {"kind": "event_exists", "start": "2026-12-09T14:00:00Z"},
     with_state(_event(start="2026-12-09T15:00:00+01:00")), with_state(_event(start="2026-12-09T15:00:00Z", end="2026-12-09T16:00:00Z"))),
    ("event_absent-event_id", {"kind": "event_absent", "event_id": "e1"}, with_state(_del_event("e1")), unchanged_state),
    ("event_absent-title", {"kind": "event_absent", "title_contains": "STAND"}, with_state(_del_event("e1")), unchanged_state),
    ("event_absent-check-id", {"kind": "event_absent", "id": "e2"}, with_state(_del_event("e2")), with_state(_del_event("e1"))),
    ("record", {"kind": "record", "service": "tickets", "collection": "tickets", "match": {"id": "t1"},
                "fields": {"status": "closed", "assignee": "*@acme.test"}},
     with_state(_ticket("t1", status="closed", assignee="bo@acme.test")), with_state(_ticket("t1", status="closed"))),
    ("record-no-match", {"kind": "record", "service": "docs", "collection": "docs", "match": {"title": "minutes*"}},
     with_state(lambda s: s["docs"]["docs"].append({"id": "d2", "title": "Minutes 1", "body": ""})), unchanged_state),
    ("record-contacts", {"kind": "record", "service": "contacts", "collection": "people", "match": {"id": "c1"},
                         "fields": {"team": "finance"}}, unchanged_state,
     with_state(lambda s: s["contacts"]["people"][0].__setitem__("team", "sales"))),
    ("unchanged-service", {"kind": "unchanged", "service": "calendar"}, with_state(_set_file("x", "y")), with_state(_del_event("e1"))),
    ("unchanged-path", {"kind": "unchanged", "path": "notes/todo.txt"}, with_state(_set_file("other.txt", "x")),
     with_state(_set_file("notes/todo.txt", "x"))),
    ("unchanged-path-deleted", {"kind": "unchanged", "path": "notes/todo.txt"}, unchanged_state, with_state(_del_file("notes/todo.txt"))),
    ("tool_called", {"kind": "tool_called", "tool": "mail_send", "args": {"to": "*@acme.test"}},
     with_calls(ok(0, "mail_send", {"to": ["x@other.test", "Y@ACME.TEST"]})),
     with_calls(err(0, "mail_send", 500, {"to": "y@acme.test"}), ok(1, "mail_send", {"to": "y@other.test"}))),
    ("tool_called-min-max", {"kind": "tool_called", "tool": "mail_search", "min": 2, "max": 3},
     with_calls(*(ok(i, "mail_search") for i in range(3))), with_calls(*(ok(i, "mail_search") for i in range(4)))),
    ("tool_called-max-zero", {"kind": "tool_called", "tool": "mail_delete", "min": 0, "max": 0},
     with_calls(err(0, "mail_delete", 404)), with_calls(ok(0, "mail_delete"))),
    ("tool_not_called", {"kind": "tool_not_called", "tool": "mail_delete"}, with_calls(ok(0, "mail_read")),
     with_calls(err(0, "mail_delete", 400))),  # even a rejected call counts
    ("asked_user", {"kind": "asked_user", "about": ["budget", "deadline"]}, with_answer("ok", ("What is the DEADLINE?",)),
     with_answer("the deadline is friday")),  # the final answer is not a question to the user
    ("asked_user-str", {"kind": "asked_user", "about": "room"}, with_answer("ok", ("hi", "which room?")), with_answer("ok", ("hi",))),
    ("answer_contains", {"kind": "answer_contains", "text": "Archived"}, with_answer("I ARCHIVED it"), with_answer("Done.")),
    ("answer_contains-any_of", {"kind": "answer_contains", "any_of": ["north", "n. region"]}, with_answer("The North region"),
     with_answer("south")),
    ("answer_number", {"kind": "answer_number", "value": 1234.5}, with_answer("Total: 1,234.50 EUR"), with_answer("Total: 1,234 EUR")),
    ("answer_number-tol", {"kind": "answer_number", "value": 100, "tol": 0.5}, with_answer("about 100.4"), with_answer("about 100.6")),
    ("answer_number-none", {"kind": "answer_number", "value": 0}, with_answer("0 items"), with_answer("no number")),
]


def test_table_covers_every_check_kind():
    assert {fields["kind"] for _, fields, _, _ in TABLE} == set(CHECK_KINDS)
    assert set(CHECKS.names()) == set(CHECK_KINDS)


@pytest.mark.parametrize(("label", "fields", "passing", "failing"), TABLE, ids=[row[0] for row in TABLE])
def test_check_kind(label, fields, passing, failing):
    ch = check(**fields)
    yes, reason_yes = evaluate(ch, passing())
    no, reason_no = evaluate(ch, failing())
    assert yes is True, reason_yes
    assert no is False, reason_no
    assert isinstance(reason_no, str) and reason_no
    # pure: same evidence, same outcome
    assert evaluate(ch, passing()) == (yes, reason_yes)


def test_checks_do_not_mutate_evidence():
    ev = with_state(_sent(to=["x@acme.test"]))()
    before = (copy.deepcopy(ev.initial_state), copy.deepcopy(ev.final_state))
    for _, fields, _, _ in TABLE:
        evaluate(check(**fields), ev)
    assert (ev.initial_state, ev.final_state) == before


# --- matching ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "actual", "expected"),
    [
        ("*@external.test", "bob@external.test", True),
        ("*@external.test", "BOB@EXTERNAL.TEST", True),
        ("*@EXTERNAL.test", "bob@external.test", True),
        ("*@external.test", "bob@external.test.evil", False),
        ("*@external.test", "bob@internal.test", False),
        ("b?b@x.test", "bob@x.test", True),
        ("[ab]*", "Apple", True),
        ("[!ab]*", "apple", False),
        ("*@external.test", ["me@acme.test", "x@external.test"], True),  # any element
        ("*@external.test", ["me@acme.test"], False),
        ("*@external.test", [], False),
        ("exact", "exact", True),
        ("exact", "exactly", False),
        ("1", 1, False),  # a string pattern does not match a number
        (4000, 4000, True),
        (4000, 4000.0, True),
        (4000, 4001, False),
        (4000, "4000", False),
        (True, True, True),
        (True, 1, False),  # bools are not ints
        (1, True, False),
        (0, False, False),
        (False, False, True),
        (None, None, True),
        (None, "x", False),
        (["a", "b"], ["a", "b"], True),  # a list pattern compares whole
        (["a"], ["a", "b"], False),
        ({"k": "v*"}, {"k": "value", "other": 1}, True),  # dicts: subset
        ({"k": "v*"}, {"other": 1}, False),
        (1, [0, 1, 2], True),
    ],
)
def test_value_matches(pattern, actual, expected):
    assert value_matches(pattern, actual) is expected


def test_args_match():
    assert args_match(None, None) is True
    assert args_match({}, {"a": 1}) is True
    assert args_match(None, {"a": 1}) is True
    assert args_match({"to": "*@x.test"}, None) is False  # arguments that were not a JSON object
    assert args_match({"to": "*@x.test"}, {}) is False  # a missing argument does not match
    assert args_match({"to": "*@x.test", "subject": "*invoice*"}, {"to": ["a@x.test"], "subject": "Fwd: INVOICE 7"}) is True
    assert args_match({"to": "*@x.test", "subject": "*invoice*"}, {"to": ["a@x.test"], "subject": "hello"}) is False


@pytest.mark.parametrize("pattern", ["*@external.test", "a?c", "[ab]x", "[!ab]x", "report-*.csv", "plain", 3, None, True])
def test_example_value_matches_its_pattern(pattern):
    assert value_matches(pattern, example_value(pattern))


# --- answer_number parsing ----------------------------------------------------------------------------------


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
    ],
)
def test_first_number(text, number):
    assert first_number(text) == number


def test_answer_number_uses_the_first_number_only():
    ch = check(kind="answer_number", value=3)
    assert evaluate(ch, with_answer("3 of 10")())[0] is True
    assert evaluate(ch, with_answer("10, of which 3")())[0] is False


# --- instants ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("stored", "asked", "same"),
    [
        ("2026-12-09T14:00:00Z", "2026-12-09T15:00:00+01:00", True),
        ("2026-12-09T14:00:00Z", "2026-12-09T14:00:00+00:00", True),
        ("2026-12-09T14:00:00Z", "2026-12-09T14:00:00", True),  # no offset: UTC
        ("2026-12-09T14:00:00Z", "2026-12-09T09:00:00-05:00", True),
        ("2026-12-09T14:00:00Z", "2026-12-09T15:00:00Z", False),
        ("2026-12-09T14:00:00Z", "2026-12-09T14:00:01Z", False),
        ("2026-12-09T14:00:00Z", "not a time", False),
    ],
)
def test_event_times_compare_as_instants(stored, asked, same):
    ev = with_state(_event(start=stored, end="2026-12-09T23:00:00Z"))()
    assert evaluate(check(kind="event_exists", start=asked), ev)[0] is same


# --- parameter validation ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fields",
    [
        {"kind": "file_contains", "path": "a"},  # neither text nor regex
        {"kind": "file_contains", "path": "a", "text": "x", "regex": "x"},
        {"kind": "csv_cell", "path": "a", "match": {}, "column": "c"},  # neither equals nor value
        {"kind": "sheet_cell", "sheet": "s", "match": {}, "column": "c", "equals": 1, "value": 1.0},
        {"kind": "event_absent", "event_id": "e1", "title_contains": "x"},
        {"kind": "record", "service": "tickets", "collection": "people", "match": {"id": "t1"}},
        {"kind": "record", "service": "files", "collection": "files", "match": {"id": "t1"}},
        {"kind": "unchanged"},
        {"kind": "unchanged", "service": "calendar", "path": "a"},
        {"kind": "unchanged", "service": "nope"},
        {"kind": "answer_contains"},
        {"kind": "mail_in_folder", "ids": [], "folder": "x"},
        {"kind": "answer_number", "value": 1, "tol": -1},
        {"kind": "file_exists", "path": "a", "weight": 0},
        {"kind": "file_exists", "path": "a", "unknown": 1},
        {"kind": "no_such_kind"},
        # Regression (fixed): an invalid regex is accepted by the spec and only fails at grading time (re.error escapes
        # `evaluate`); the spec should reject it up front.
        {"kind": "file_contains", "path": "a", "regex": "("},
    ],
)
def test_invalid_check_parameters(fields):
    with pytest.raises(ValidationError):
        check(**fields)
