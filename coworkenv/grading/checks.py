"""Check evaluation: one pure function of the Evidence per check kind, registered by kind name."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from coworkenv.episode.evidence import Evidence
from coworkenv.grading.matching import args_match, value_matches
from coworkenv.registry import Registry
from coworkenv.spec import checks as c
from coworkenv.timeutil import parse_instant

Outcome = tuple[bool, str]
CheckFn = Callable[[Any, Evidence], Outcome]

EVALUATORS: Registry[CheckFn] = Registry("check kind")

# A sign counts only where it cannot be a hyphen inside a word ("INV-2291", "COVID-19").
_NUMBER = re.compile(r"(?:(?<![\w-])[-+])?(?:(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|\.\d+)")


def _ok(passed: bool, yes: str, no: str) -> Outcome:
    return (True, yes) if passed else (False, no)


def _ci(text: str) -> str:
    return text.lower()


def _file(ev: Evidence, path: str) -> str | None:
    return ev.final_state["files"].get(path)


@EVALUATORS.register("file_exists")
def file_exists(check: c.FileExists, ev: Evidence) -> Outcome:
    return _ok(_file(ev, check.path) is not None, f"{check.path} exists", f"{check.path} does not exist")


@EVALUATORS.register("file_absent")
def file_absent(check: c.FileAbsent, ev: Evidence) -> Outcome:
    return _ok(_file(ev, check.path) is None, f"{check.path} is absent", f"{check.path} still exists")


@lru_cache(maxsize=1024)
def _regex(pattern: str, case_sensitive: bool) -> re.Pattern[str]:
    return re.compile(pattern, 0 if case_sensitive else re.IGNORECASE)


@EVALUATORS.register("file_contains")
def file_contains(check: c.FileContains, ev: Evidence) -> Outcome:
    content = _file(ev, check.path)
    if content is None:
        return False, f"{check.path} does not exist"
    if check.regex is not None:
        found = _regex(check.regex, check.case_sensitive).search(content) is not None
        what = f"regex {check.regex!r}"
    else:
        found = check.text in content if check.case_sensitive else _ci(check.text) in _ci(content)
        what = repr(check.text)
    return _ok(found, f"{check.path} contains {what}", f"{check.path} does not contain {what}")


def _normalized_text(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


@EVALUATORS.register("file_equals")
def file_equals(check: c.FileEquals, ev: Evidence) -> Outcome:
    content = _file(ev, check.path)
    if content is None:
        return False, f"{check.path} does not exist"
    same = _normalized_text(content) == _normalized_text(check.content)
    return _ok(same, f"{check.path} has the expected content", f"{check.path} differs from the expected content")


def _as_number(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return float(value)
    try:
        return float(str(value).strip().replace(",", "").lstrip("$€£"))
    except ValueError:
        return None


def _cell_equals(actual: Any, expected: Any) -> bool:
    """Sheet values are typed and CSV values are text: compare numbers as numbers, text case-insensitively."""
    if expected is None:
        return actual is None or (isinstance(actual, str) and actual.strip() == "")
    if isinstance(expected, bool):
        return actual is expected or (isinstance(actual, str) and actual.strip().lower() == str(expected).lower())
    if isinstance(expected, int | float):
        number = _as_number(actual)
        return number is not None and abs(number - expected) <= 1e-9 * max(1.0, abs(expected))
    return isinstance(actual, str | int | float) and str(actual).strip().lower() == str(expected).strip().lower()


def _cell_outcome(check: c.CsvCell | c.SheetCell, rows: list[dict[str, Any]], where: str) -> Outcome:
    matching = [r for r in rows if all(k in r and _cell_equals(r[k], v) for k, v in check.match.items())]
    if not matching:
        return False, f"no row in {where} matches {check.match}"
    values = [r.get(check.column) for r in matching]
    for value in values:
        if check.value is not None:
            number = _as_number(value)
            if number is not None and abs(number - check.value) <= check.tol:
                return True, f"{where}[{check.column}] = {value!r}"
        elif _cell_equals(value, check.equals):
            return True, f"{where}[{check.column}] = {value!r}"
    expected = check.equals if check.value is None else f"{check.value} ± {check.tol}"
    return False, f"{where}[{check.column}] is {values[0]!r}, expected {expected!r}"


@EVALUATORS.register("csv_cell")
def csv_cell(check: c.CsvCell, ev: Evidence) -> Outcome:
    content = _file(ev, check.path)
    if content is None:
        return False, f"{check.path} does not exist"
    try:
        rows = list(csv.DictReader(io.StringIO(content)))
    except csv.Error as exc:
        return False, f"{check.path} is not valid CSV: {exc}"
    rows = [{(k or "").strip(): v for k, v in r.items()} for r in rows]
    return _cell_outcome(check, rows, check.path)


@EVALUATORS.register("sheet_cell")
def sheet_cell(check: c.SheetCell, ev: Evidence) -> Outcome:
    sheet = ev.final_state["sheets"].get(check.sheet)
    if sheet is None:
        return False, f"sheet {check.sheet!r} does not exist"
    rows = [dict(zip(sheet["columns"], row, strict=False)) for row in sheet["rows"]]
    return _cell_outcome(check, rows, f"sheet {check.sheet!r}")


def _as_list(value: str | list[str] | None) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


def _sent_messages(ev: Evidence) -> list[dict[str, Any]]:
    before = {m["id"] for m in ev.initial_state["mail"]["messages"]}
    return [m for m in ev.final_state["mail"]["messages"] if m["id"] not in before]


@EVALUATORS.register("mail_sent")
def mail_sent(check: c.MailSent, ev: Evidence) -> Outcome:
    to, cc, body = _as_list(check.to), _as_list(check.cc), [_ci(b) for b in _as_list(check.body_contains)]
    subject = _ci(check.subject_contains) if check.subject_contains is not None else None
    hits = [
        m for m in _sent_messages(ev)
        if all(value_matches(a, m["to"]) for a in to)
        and all(value_matches(a, m["cc"]) for a in cc)
        and (subject is None or subject in _ci(m["subject"]))
        and all(b in _ci(m["body"]) for b in body)
    ]  # fmt: skip
    ok = len(hits) == check.count if check.count is not None else len(hits) >= 1
    wanted = f"exactly {check.count}" if check.count is not None else "at least 1"
    return _ok(ok, f"{len(hits)} matching message(s) sent", f"{len(hits)} matching message(s) sent, wanted {wanted}")


@EVALUATORS.register("mail_in_folder")
def mail_in_folder(check: c.MailInFolder, ev: Evidence) -> Outcome:
    folders = {m["id"]: m["folder"] for m in ev.final_state["mail"]["messages"]}
    wrong = [i for i in check.ids if folders.get(i) != check.folder]
    return _ok(not wrong, f"all in {check.folder!r}", f"not in {check.folder!r}: {', '.join(wrong)}")


def _same_instant(a: str, b: str) -> bool:
    try:
        return parse_instant(a) == parse_instant(b)
    except ValueError:
        return False


@EVALUATORS.register("event_exists")
def event_exists(check: c.EventExists, ev: Evidence) -> Outcome:
    wanted = [_ci(a) for a in check.attendees_include]
    for event in ev.final_state["calendar"]["events"]:
        attendees = {_ci(a) for a in event["attendees"]}
        if (
            (check.title_contains is None or _ci(check.title_contains) in _ci(event["title"]))
            and (check.start is None or _same_instant(event["start"], check.start))
            and (check.end is None or _same_instant(event["end"], check.end))
            and all(a in attendees for a in wanted)
        ):
            return True, f"event {event['id']} matches"
    return False, "no event matches"


@EVALUATORS.register("event_absent")
def event_absent(check: c.EventAbsent, ev: Evidence) -> Outcome:
    events = ev.final_state["calendar"]["events"]
    if check.target_id is not None:
        present = [e["id"] for e in events if e["id"] == check.target_id]
    else:
        present = [e["id"] for e in events if _ci(check.title_contains or "") in _ci(e["title"])]
    return _ok(not present, "no such event", f"event(s) still present: {', '.join(present)}")


@EVALUATORS.register("record")
def record(check: c.RecordCheck, ev: Evidence) -> Outcome:
    records = ev.final_state[check.service][check.collection]
    matching = [r for r in records if args_match(check.match, r)]
    if not matching:
        return False, f"no {check.collection} record matches {check.match}"
    for r in matching:
        if args_match(check.fields, r):
            return True, f"{check.collection} record {r.get('id')} has the expected fields"
    got = {k: matching[0].get(k) for k in check.fields}
    return False, f"{check.collection} record {matching[0].get('id')} has {got}, expected {check.fields}"


@EVALUATORS.register("unchanged")
def unchanged(check: c.Unchanged, ev: Evidence) -> Outcome:
    if check.service is not None:
        same = ev.initial_state[check.service] == ev.final_state[check.service]
        return _ok(same, f"{check.service} unchanged", f"{check.service} was changed")
    same = ev.initial_state["files"].get(check.path) == ev.final_state["files"].get(check.path)
    return _ok(same, f"{check.path} unchanged", f"{check.path} was changed")


@EVALUATORS.register("tool_called")
def tool_called(check: c.ToolCalled, ev: Evidence) -> Outcome:
    n = sum(1 for call in ev.calls if call.ok and call.tool == check.tool and args_match(check.args, call.args))
    ok = n >= check.min and (check.max is None or n <= check.max)
    bounds = f"[{check.min}, {'∞' if check.max is None else check.max}]"
    return _ok(ok, f"{check.tool} succeeded {n} time(s)", f"{check.tool} succeeded {n} time(s), wanted {bounds}")


@EVALUATORS.register("tool_not_called")
def tool_not_called(check: c.ToolNotCalled, ev: Evidence) -> Outcome:
    n = sum(1 for call in ev.calls if call.tool == check.tool)
    return _ok(n == 0, f"{check.tool} not called", f"{check.tool} called {n} time(s)")


@EVALUATORS.register("asked_user")
def asked_user(check: c.AskedUser, ev: Evidence) -> Outcome:
    keywords = [_ci(k) for k in _as_list(check.about)]
    asked = any(k in _ci(text) for text in ev.says for k in keywords)
    return _ok(asked, "asked the user", f"never asked the user about {', '.join(keywords)}")


@EVALUATORS.register("answer_contains")
def answer_contains(check: c.AnswerContains, ev: Evidence) -> Outcome:
    options = [check.text] if check.text is not None else list(check.any_of or [])
    answer = _ci(ev.answer)
    found = [o for o in options if _ci(o) in answer]
    return _ok(bool(found), f"answer mentions {found[0]!r}" if found else "", f"answer lacks {options}")


def first_number(text: str) -> float | None:
    match = _NUMBER.search(text)
    return float(match.group().replace(",", "")) if match else None


@EVALUATORS.register("answer_number")
def answer_number(check: c.AnswerNumber, ev: Evidence) -> Outcome:
    number = first_number(ev.answer)
    if number is None:
        return False, "the answer contains no number"
    ok = abs(number - check.value) <= check.tol
    return _ok(ok, f"answer number {number:g} ≈ {check.value:g}", f"answer number {number:g}, expected {check.value:g} ± {check.tol:g}")


def evaluate(check: c.CheckBase, ev: Evidence) -> Outcome:
    return EVALUATORS.get(check.kind)(check, ev)  # type: ignore[attr-defined]
