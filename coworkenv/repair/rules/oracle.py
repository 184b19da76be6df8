"""Repairs that trust the oracle: expectations recomputed from its final state, prohibited rules it must break narrowed."""

from __future__ import annotations

import copy
import csv
import io
from typing import Any

from coworkenv.episode.evidence import Evidence
from coworkenv.grading.checks import _as_number, _cell_equals, first_number
from coworkenv.grading.consistency import violating_step
from coworkenv.grading.matching import args_match, value_matches
from coworkenv.repair.rules.common import (
    _DROP,
    REPAIRERS,
    RepairContext,
    Spec,
    _changed,
    _drop_checks,
    _glob_literal,
    describe_errors,
    holds,
    oracle_run,
    parse,
    untouched_run,
)
from coworkenv.spec.task import TaskSpec, ToolStep
from coworkenv.validate.battery import numbers_in
from coworkenv.validate.verdict import CheckOutcome
from coworkenv.workspace.tools import TOOLS

# --- recomputing an expectation from the oracle's final state -------------------------------------------------


def _rows(check: dict[str, Any], final: dict[str, Any]) -> list[dict[str, Any]] | None:
    if check["kind"] == "sheet_cell":
        sheet = final["sheets"].get(check["sheet"])
        if sheet is None:
            return None
        return [dict(zip(sheet["columns"], row, strict=False)) for row in sheet["rows"]]
    content = final["files"].get(check["path"])
    if content is None:
        return None
    try:
        return [{(k or "").strip(): v for k, v in r.items()} for r in csv.DictReader(io.StringIO(content))]
    except csv.Error:
        return None


def _recompute_cell(check: dict[str, Any], final: dict[str, Any]) -> Any:
    rows = _rows(check, final)
    if rows is None:
        return _DROP
    matching = [r for r in rows if all(k in r and _cell_equals(r[k], v) for k, v in check["match"].items())]
    if not matching or check["column"] not in matching[0]:
        return None
    actual = matching[0][check["column"]]
    new = dict(check)
    number = _as_number(actual) if check.get("value") is not None else None
    if number is not None:
        new["value"] = int(number) if float(number).is_integer() and abs(number) < 2**53 else number
    else:
        new.pop("value", None)
        new.pop("tol", None)
        new["equals"] = actual
    return new


def _added_lines(before: str | None, after: str) -> list[str]:
    old = {line.strip() for line in (before or "").splitlines()}
    return [line.strip() for line in after.splitlines() if line.strip() and line.strip() not in old]


def _recompute_event(check: dict[str, Any], ev: Evidence) -> Any:
    initial = {e["id"]: e for e in ev.initial_state["calendar"]["events"]}
    touched = [e for e in ev.final_state["calendar"]["events"] if initial.get(e["id"]) != e]
    if not touched:
        return _DROP
    title = (check.get("title_contains") or "").lower()
    titled = [e for e in touched if title and title in e["title"].lower()]
    if titled:
        event = titled[0]
    elif len(touched) == 1:
        event = touched[0]
    else:
        return None
    new = dict(check)
    if title and title not in event["title"].lower():
        new["title_contains"] = event["title"]
    if check.get("start") is not None:
        new["start"] = event["start"]
    if check.get("end") is not None:
        new["end"] = event["end"]
    attendees = {a.lower() for a in event["attendees"]}
    if check.get("attendees_include"):
        new["attendees_include"] = [a for a in check["attendees_include"] if a.lower() in attendees]
    return new


def _sent(ev: Evidence) -> list[dict[str, Any]]:
    before = {m["id"] for m in ev.initial_state["mail"]["messages"]}
    return [m for m in ev.final_state["mail"]["messages"] if m["id"] not in before]


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


def _mail_hits(check: dict[str, Any], ev: Evidence) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Sent messages to the check's addressees, and those of them that also match subject and body."""
    to, cc = _as_list(check.get("to")), _as_list(check.get("cc"))
    addressed = [
        m for m in _sent(ev)
        if all(value_matches(a, m["to"]) for a in to) and all(value_matches(a, m["cc"]) for a in cc)
    ]  # fmt: skip
    subject = (check.get("subject_contains") or "").lower()
    body = [b.lower() for b in _as_list(check.get("body_contains"))]
    hits = [m for m in addressed if subject in m["subject"].lower() and all(b in m["body"].lower() for b in body)]
    return addressed, hits


def _recompute_mail(check: dict[str, Any], ev: Evidence) -> Any:
    count = check.get("count")
    if count == 0:
        return _DROP  # a "never send this" guard that the trusted oracle itself breaks
    addressed, hits = _mail_hits(check, ev)
    if hits:
        return {**check, "count": len(hits)} if count is not None else check
    if not addressed:
        return None
    message, new = addressed[0], dict(check)
    if (check.get("subject_contains") or "").lower() not in message["subject"].lower():
        new.pop("subject_contains")
    if "body_contains" in new:
        new["body_contains"] = [b for b in _as_list(check["body_contains"]) if b.lower() in message["body"].lower()]
    _, hits = _mail_hits(new, ev)
    if not hits:
        return None
    if count is not None:
        new["count"] = len(hits)
    return new


def _recompute_record(check: dict[str, Any], final: dict[str, Any]) -> Any:
    records = final[check["service"]][check["collection"]]
    matching = [r for r in records if args_match(check["match"], r)]
    if not matching:
        return _DROP
    record = matching[0]
    new = dict(check)
    new["fields"] = {
        k: v if value_matches(v, record[k]) and v == v else _glob_literal(record[k])
        for k, v in check.get("fields", {}).items() if k in record
    }  # fmt: skip
    return new


def _recompute_asked(check: dict[str, Any], spec: TaskSpec, ev: Evidence) -> Any:
    says = [s.lower() for s in ev.says]
    words = _as_list(check.get("about"))
    if spec.user is not None:
        words += [k for rule in spec.user.reveal for k in rule.when_any]
    found = list(dict.fromkeys(w for w in words if any(w.lower() in s for s in says)))
    if not found:
        return _DROP
    return {**check, "about": found}


def recompute(check: dict[str, Any], spec: TaskSpec, ev: Evidence) -> Any:
    """The check with its expectation taken from the (trusted) oracle's evidence; `_DROP` where the oracle
    never produces its target (or breaks a guard); None where it cannot be recomputed."""
    kind, final = check.get("kind"), ev.final_state
    if kind == "answer_number":
        # The grader reads the answer's first number; recompute only where that is a figure standing on its own,
        # not the year of a date or the digits of an identifier.
        number, figures = first_number(ev.answer), numbers_in(ev.answer)
        if number is None or not figures or figures[0] != number:
            return None
        return {**check, "value": int(number) if number.is_integer() else number}
    if kind in ("sheet_cell", "csv_cell"):
        return _recompute_cell(check, final)
    if kind == "file_equals":
        content = final["files"].get(check["path"])
        return _DROP if content is None else {**check, "content": content}
    if kind == "file_contains":
        content = final["files"].get(check["path"])
        if content is None:
            return _DROP
        added = _added_lines(ev.initial_state["files"].get(check["path"]), content)
        if not added:
            return None
        new = {k: v for k, v in check.items() if k not in ("regex", "text")}
        return {**new, "text": added[0][:200]}
    if kind == "record":
        return _recompute_record(check, final)
    if kind == "event_exists":
        return _recompute_event(check, ev)
    if kind == "mail_sent":
        return _recompute_mail(check, ev)
    if kind == "mail_in_folder":
        folders = {m["id"]: m["folder"] for m in final["mail"]["messages"]}
        ids = [i for i in check["ids"] if i in folders]
        if not ids:
            return _DROP
        targets = {folders[i] for i in ids}
        return {**check, "ids": ids, "folder": targets.pop()} if len(targets) == 1 else None
    if kind == "tool_called":
        calls = [c for c in ev.calls if c.ok and c.tool == check["tool"]]
        n = sum(1 for c in calls if args_match(check.get("args"), c.args))
        if n == 0:
            return _DROP if not calls else {k: v for k, v in check.items() if k != "args"}
        new = {**check, "min": min(check.get("min", 1), n)}
        if check.get("max") is not None:
            new["max"] = max(check["max"], n)
        return new
    if kind == "asked_user":
        return _recompute_asked(check, spec, ev)
    if kind == "answer_contains":
        answer = ev.answer.lower()
        if check.get("any_of"):
            kept = [o for o in check["any_of"] if o.lower() in answer]
            return {**check, "any_of": kept} if kept else _DROP
        return _DROP
    # unchanged, tool_not_called, file_exists, file_absent, event_absent: the trusted oracle disagrees with a
    # target it never produces or a guard it must break to do the task.
    return _DROP


# --- prohibited rules that the task's own solution breaks -------------------------------------------------


KEY_ARG = {
    "mail_delete": "id", "mail_move": "id", "mail_reply": "id", "mail_read": "id",
    "calendar_delete": "id", "calendar_update": "id", "docs_update": "id", "docs_read": "id",
    "tickets_update": "id", "tickets_get": "id", "contacts_get": "id",
    "files_delete": "path", "files_write": "path", "files_read": "path", "files_move": "src",
    "chat_post": "channel", "chat_read": "channel", "sheets_update": "sheet", "sheets_append": "sheet",
    "sheets_read": "sheet", "mail_send": "to",
}  # fmt: skip
"""The argument that names what a call acts on: the one a narrowed prohibited rule pins down."""
MAX_NARROWED = 8


def _candidates(tool: str, key: str, state: dict[str, Any]) -> list[str]:
    """The values `key` of `tool` could take in this workspace."""
    service = tool.split("_", 1)[0]
    if key == "path" or key == "src":
        return sorted(state["files"])
    if key == "sheet":
        return sorted(state["sheets"])
    if key == "channel":
        return sorted(state["chat"]["channels"])
    if key == "to":
        me = state["me"]["email"].lower()
        seen = [p["email"] for p in state["contacts"]["people"]]
        for m in state["mail"]["messages"]:
            seen += [m["from"], *m["to"], *m["cc"]]
        domains = sorted({a.lower().rsplit("@", 1)[-1] for a in seen if "@" in a} - {me.rsplit("@", 1)[-1]})
        return [f"*@{d}" for d in domains]
    collection = {"mail": "messages", "calendar": "events", "docs": "docs", "tickets": "tickets", "contacts": "people"}
    if service in collection:
        return [r["id"] for r in state[service][collection[service]]]
    return []


def _oracle_calls(spec: TaskSpec, tool: str) -> list[dict[str, Any]]:
    return [s.args for s in spec.solution if isinstance(s, ToolStep) and s.tool == tool]


def narrow_rule(rule: dict[str, Any], spec: TaskSpec, ctx: RepairContext) -> list[dict[str, Any]]:
    """Replace a rule the oracle must break by rules on the targets the oracle leaves alone; [] = drop it."""
    tool, args = rule.get("tool"), dict(rule.get("args") or {})
    matched = [a for a in _oracle_calls(spec, tool) if args_match(args, a)]
    key = KEY_ARG.get(tool)
    if key is not None:
        used = {str(v).lower() for a in matched for v in _as_list(a.get(key))}
        narrowed = []
        for value in _candidates(tool, key, spec.initial_state):
            if args.get(key) is not None and not value_matches(args[key], value.replace("*", "x")):
                continue
            if value.lower() in used or any(value_matches(value, u) for u in used):
                continue
            narrowed.append({**rule, "args": {**args, key: value if key == "to" else _glob_literal(value)}})
        if narrowed and len(narrowed) <= MAX_NARROWED:
            ctx.note(
                f"prohibited rule on {tool} {args or ''} is broken by the task's own solution; narrowed to "
                f"{key} ∈ {[r['args'][key] for r in narrowed]} (the targets the solution leaves alone)"
            )
            return narrowed
    ctx.note(
        f"prohibited rule on {tool} {args or ''} dropped: the task's legitimate solution needs that call and no argument distinguishes a harmful one"
    )
    return []


def fix_prohibited(spec_dict: Spec, spec: TaskSpec, ctx: RepairContext) -> Spec | None:
    """Narrow or drop every prohibited rule that the oracle breaks or that no call can be built to violate."""
    new = copy.deepcopy(spec_dict)
    rules: list[dict[str, Any]] = []
    for i, rule in enumerate(spec.prohibited):
        raw = spec_dict["prohibited"][i]
        try:
            violating_step(rule)
        except ValueError:
            ctx.note(f"prohibited rule {i} on {rule.tool} dropped: no call can be built that it matches")
            continue
        if rule.tool not in TOOLS:
            ctx.note(f"prohibited rule {i} dropped: {TOOLS.unknown_message(rule.tool)}")
            continue
        if any(args_match(rule.args, a) for a in _oracle_calls(spec, rule.tool)):
            rules.extend(narrow_rule(raw, spec, ctx))
        else:
            rules.append(raw)
    new["prohibited"] = rules
    return _changed(spec_dict, new)


# --- the repairers --------------------------------------------------------------------------------------------


def _spec_or_note(spec_dict: Spec, ctx: RepairContext) -> TaskSpec | None:
    spec = parse(spec_dict)
    if spec is None:
        ctx.note("the spec does not parse as a TaskSpec; fix the schema first")
    return spec


@REPAIRERS.register("oracle_scores_1")
def repair_oracle(spec_dict: Spec, outcome: CheckOutcome, ctx: RepairContext) -> Spec | None:
    """Recompute the expectations that disagree with a trusted oracle's final state or answer; narrow or drop
    prohibited rules the oracle itself breaks; drop guards the oracle must break."""
    spec = _spec_or_note(spec_dict, ctx)
    if spec is None:
        return None
    oracle = oracle_run(spec)
    if not oracle.trusted:
        ctx.note(f"the oracle's own calls fail ({describe_errors(oracle.tool_errors)}): its final state cannot be trusted")
        return None
    if oracle.grade.score == 1.0:
        ctx.note("without faults the oracle scores 1.0: the failure comes from the fault profile")
        return None
    new = copy.deepcopy(spec_dict)
    if oracle.grade.violations:
        new = fix_prohibited(new, spec, ctx) or new
    untouched = untouched_run(spec).evidence
    drop, unfixable = set(), []
    for i, result in enumerate(oracle.grade.checks):
        if result.passed:
            continue
        fixed = recompute(new["checks"][i], spec, oracle.evidence)
        if fixed is _DROP:
            drop.add(i)
        elif fixed is None or not holds(fixed, oracle.evidence):
            unfixable.append(f"{result.id} ({result.reason})")
        else:
            ctx.note(f"check {result.id}: expectation recomputed from the oracle ({result.reason})")
            new["checks"][i] = fixed
    _drop_checks(new, drop, untouched, ctx, "the trusted oracle never produces their target or must break them")
    if unfixable:
        ctx.note(f"cannot recompute from the oracle: {', '.join(unfixable)}")
    return _changed(spec_dict, new)



@REPAIRERS.register("prohibited_zeroes")
def repair_prohibited(spec_dict: Spec, outcome: CheckOutcome, ctx: RepairContext) -> Spec | None:
    """A rule the oracle itself must break: narrow it to the targets the solution leaves alone, else drop it."""
    spec = _spec_or_note(spec_dict, ctx)
    if spec is None:
        return None
    return fix_prohibited(spec_dict, spec, ctx)
