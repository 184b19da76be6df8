"""Rule-based repairers, keyed by battery failure code.

A repairer is `fn(spec, outcome, context) -> patched spec | None`: it gets the spec as plain JSON data (it may not
even parse as a TaskSpec), the failing battery outcome and a `RepairContext`, and returns a new spec dict, or None
when it cannot fix the failure (it says why in `context.notes`). Repairers never trust the outcome's `details`
blindly: they re-run the oracle and an untouched ("Done.") episode themselves and work from that evidence, so
they hold even where the battery's details are terse. The loop (`repair.loop`) re-validates every patch.

Principles:
- The oracle is the ground truth only when it is *trusted*: every one of its own calls succeeded (injected
  faults aside). A check that disagrees with a trusted oracle is recomputed from the oracle's final state or
  answer; with an untrusted oracle nothing is recomputed and the task goes on to the LLM or is rejected.
- A check is dropped only when it is *safe*: another check that the untouched workspace fails remains.
- Every change is recorded in `context.notes` so that lineage says what was done and why.
"""

from __future__ import annotations

import copy
import csv
import difflib
import io
import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import jsonpatch
from pydantic import TypeAdapter, ValidationError

from coworkenv.agents.registry import make_policy
from coworkenv.env.evidence import Evidence
from coworkenv.env.runner import run_episode
from coworkenv.grading.checks import _as_number, _cell_equals, evaluate, first_number
from coworkenv.grading.consistency import violating_step
from coworkenv.grading.matching import args_match, value_matches
from coworkenv.grading.score import Grade, grade
from coworkenv.registry import Registry
from coworkenv.spec.capabilities import CAPABILITIES
from coworkenv.spec.checks import Check
from coworkenv.spec.task import AnswerStep, SayStep, TaskSpec, ToolStep
from coworkenv.validate.battery import numbers_in
from coworkenv.validate.results import CheckOutcome, TaskValidation
from coworkenv.workspace.tools import TOOLS
from coworkenv.workspace.workspace import AuditEntry

Spec = dict[str, Any]


@dataclass
class RepairContext:
    """What a repairer may look at besides the spec and the outcome, and where it explains itself."""

    validation: TaskValidation | None = None
    notes: list[str] = field(default_factory=list)

    def note(self, text: str) -> None:
        self.notes.append(text)


RepairFn = Callable[[Spec, CheckOutcome, RepairContext], Spec | None]

REPAIRERS: Registry[RepairFn] = Registry("repairer")

UNTOUCHED_ANSWER = "Done."
GUARD_KINDS = frozenset({"unchanged", "tool_not_called"})
"""Checks that hold on an untouched workspace by design: they penalize collateral damage."""
SCHEMA_FIELDS = frozenset(TaskSpec.model_fields)
_CHECK = TypeAdapter(Check)
_DROP = object()


# --- running a spec ----------------------------------------------------------------------------------------


def parse(spec: Any) -> TaskSpec | None:
    if not isinstance(spec, dict):
        return None
    try:
        return TaskSpec.model_validate(spec)
    except (ValidationError, ValueError, TypeError):
        return None


@dataclass(frozen=True)
class Run:
    spec: TaskSpec
    evidence: Evidence
    grade: Grade

    @property
    def tool_errors(self) -> list[AuditEntry]:
        """Calls that failed for a reason of the task's own making (injected faults excluded)."""
        return [c for c in self.evidence.calls if not c.ok and not c.fault]

    @property
    def trusted(self) -> bool:
        return not self.tool_errors

    @property
    def faults(self) -> int:
        return sum(1 for c in self.evidence.calls if c.fault)


def run(spec: TaskSpec, steps: list | None = None) -> Run:
    policy = make_policy("oracle", spec) if steps is None else make_policy("oracle", spec, steps=steps)
    _, evidence = run_episode(spec, policy)
    return Run(spec, evidence, grade(spec, evidence))


def fault_free(spec: TaskSpec) -> TaskSpec:
    if spec.faults.rate == 0.0:
        return spec
    data = spec.model_dump(mode="json", by_alias=True)
    data["faults"] = {**data["faults"], "rate": 0.0}
    return TaskSpec.model_validate(data)


def oracle_run(spec: TaskSpec) -> Run:
    """The oracle on a fault-free copy: what the task's solution does when every call goes through."""
    return run(fault_free(spec))


def untouched_run(spec: TaskSpec) -> Run:
    """No tool call, only the answer "Done.": what the answer-only battery check plays."""
    return run(spec, [AnswerStep(answer=UNTOUCHED_ANSWER)])


def holds(check: dict[str, Any], evidence: Evidence) -> bool:
    try:
        return evaluate(_CHECK.validate_python(check), evidence)[0]
    except (ValidationError, ValueError, TypeError, KeyError):
        return False


def describe_errors(errors: Iterable[AuditEntry], limit: int = 3) -> str:
    items = [f"{e.tool} → {e.code} {e.error}" for e in errors]
    more = f" (and {len(items) - limit} more)" if len(items) > limit else ""
    return "; ".join(items[:limit]) + more


def _changed(original: Spec, patched: Spec) -> Spec | None:
    return None if patched == original else patched


def _glob_literal(value: Any) -> Any:
    """A value that `value_matches` treats literally (record fields are matched as globs)."""
    if isinstance(value, str):
        return re.sub(r"([\[*?])", r"[\1]", value)
    return value


# --- checks: what discriminates, what may be dropped ------------------------------------------------------------


def _discriminating(checks: list[dict[str, Any]], untouched: Evidence) -> list[int]:
    """Indices of the checks that the untouched workspace fails."""
    return [i for i, ch in enumerate(checks) if not holds(ch, untouched)]


def _drop_checks(spec: Spec, drop: set[int], untouched: Evidence, ctx: RepairContext, why: str) -> bool:
    """Drop these checks if another discriminating check remains; True if dropped."""
    if not drop:
        return False
    keep = [ch for i, ch in enumerate(spec["checks"]) if i not in drop]
    if not keep or not _discriminating(keep, untouched):
        ids = ", ".join(str(spec["checks"][i].get("id")) for i in sorted(drop))
        ctx.note(f"cannot drop check(s) {ids}: no discriminating check would remain")
        return False
    ids = ", ".join(str(spec["checks"][i].get("id")) for i in sorted(drop))
    ctx.note(f"dropped check(s) {ids}: {why}")
    spec["checks"] = keep
    return True


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


def _tools_for(spec_dict: Spec) -> list[str]:
    return [s["tool"] for s in spec_dict.get("solution", []) if isinstance(s, dict) and isinstance(s.get("tool"), str)]


def _params(tool: str) -> list[str]:
    return list(TOOLS.get(tool).args.model_fields)


def _args_fit(tool: str, args: Any) -> bool:
    try:
        TOOLS.get(tool).args.model_validate(args)
    except (ValidationError, ValueError, TypeError):
        return False
    return True


def _fix_args(args: dict[str, Any] | None, tool: str) -> tuple[dict[str, Any] | None, list[str]]:
    """Rename misspelled argument names to the tool's closest parameter; the names that have none."""
    if not args:
        return args, []
    fixed, lost = {}, []
    for name, value in args.items():
        target = name if name in _params(tool) else _close(name, _params(tool), cutoff=0.75)
        if target is None or target in fixed:
            lost.append(name)
        else:
            fixed[target] = value
    return fixed, lost


def _where(entry: dict[str, Any]) -> tuple[str, int] | None:
    match = re.match(r"^(solution|prohibited|checks)\[(\d+)\]", str(entry.get("where", "")))
    return (match.group(1), int(match.group(2))) if match else None


@REPAIRERS.register("references")
def repair_references(spec_dict: Spec, outcome: CheckOutcome, ctx: RepairContext) -> Spec | None:
    """Fix what `details["missing"]` names: a solution tool missing from `tools` is added (a misspelled one is
    renamed to the closest catalog tool); prohibited rules and tool checks get misspelled tools and argument
    names corrected (or are dropped); a check whose target exists nowhere is dropped when that is safe, a
    `mail_in_folder` check loses only its unknown ids, a `sheet_cell` column is mapped to the closest column."""
    spec = _spec_or_note(spec_dict, ctx)
    if spec is None:
        return None
    new = copy.deepcopy(spec_dict)
    missing = (outcome.details or {}).get("missing")
    if missing is None:  # feedback without details: ask the battery
        from coworkenv.validate.battery import Context, check_references

        missing = check_references(Context(spec))[1].get("missing", [])
    drop_rules: set[int] = set()
    drop_checks: dict[int, str] = {}
    for entry in missing:
        where = _where(entry)
        if where is None:
            continue
        section, i = where
        problem, ref = str(entry.get("problem", "")), entry.get("ref")
        if section == "solution":
            step = new["solution"][i]
            if step["tool"] not in TOOLS:
                fixed = _close(step["tool"], TOOLS.names())
                if fixed is not None and not _args_fit(fixed, step.get("args", {})):
                    fixed = None
                if fixed is None:
                    ctx.note(f"solution[{i}] calls unknown tool {step['tool']!r}: no close catalog tool")
                    continue
                ctx.note(f"solution[{i}]: tool {step['tool']!r} → {fixed!r}")
                step["tool"] = fixed
            if step["tool"] not in new["tools"]:
                ctx.note(f"added the solution's tool {step['tool']!r} to `tools`")
                new["tools"].append(step["tool"])
        elif section == "prohibited":
            rule = new["prohibited"][i]
            if rule["tool"] not in TOOLS:
                fixed = _close(rule["tool"], TOOLS.names())
                if fixed is None:
                    ctx.note(f"prohibited[{i}] names unknown tool {rule['tool']!r}: rule dropped")
                    drop_rules.add(i)
                    continue
                ctx.note(f"prohibited[{i}]: tool {rule['tool']!r} → {fixed!r}")
                rule["tool"] = fixed
            args, lost = _fix_args(rule.get("args"), rule["tool"])
            if lost:
                ctx.note(f"prohibited[{i}] on {rule['tool']}: argument(s) {lost} name no parameter; rule dropped (no valid call can break it)")
                drop_rules.add(i)
            elif args != rule.get("args"):
                ctx.note(f"prohibited[{i}] on {rule['tool']}: argument names {sorted(rule['args'])} → {sorted(args or {})}")
                rule["args"] = args
        else:
            check = new["checks"][i]
            kind = check.get("kind")
            if kind in ("tool_called", "tool_not_called"):
                if check["tool"] not in TOOLS:
                    fixed = _close(check["tool"], TOOLS.names())
                    if fixed is None:
                        drop_checks[i] = f"unknown tool {check['tool']!r}"
                        continue
                    ctx.note(f"check {check['id']}: tool {check['tool']!r} → {fixed!r}")
                    check["tool"] = fixed
                args, lost = _fix_args(check.get("args"), check["tool"])
                if lost:
                    drop_checks[i] = f"argument(s) {lost} name no parameter of {check['tool']}"
                    continue
                if args != check.get("args"):
                    check["args"] = args
                if kind == "tool_called" and check["tool"] not in new["tools"]:
                    if check["tool"] in _tools_for(new):
                        new["tools"].append(check["tool"])
                    else:
                        drop_checks[i] = f"{check['tool']} is not available to the task"
            elif kind == "mail_in_folder" and isinstance(ref, str) and "no such mail id" in problem:
                check["ids"] = [x for x in check["ids"] if x != ref]
                if not check["ids"]:
                    drop_checks[i] = "none of its mail ids exists"
                else:
                    ctx.note(f"check {check['id']}: removed unknown mail id {ref!r}")
            elif kind == "sheet_cell" and "no such column" in problem:
                sheet, _, column = str(ref).partition(".")
                columns = {c for st in (spec.initial_state, oracle_run(spec).evidence.final_state)
                           for c in st["sheets"].get(sheet, {}).get("columns", [])}  # fmt: skip
                fixed = _close(column, columns, cutoff=0.75)
                if fixed is None:
                    drop_checks[i] = f"sheet {sheet!r} has no column {column!r}"
                    continue
                ctx.note(f"check {check['id']}: column {column!r} → {fixed!r}")
                if check["column"] == column:
                    check["column"] = fixed
                if column in check["match"]:
                    check["match"] = {fixed if k == column else k: v for k, v in check["match"].items()}
            else:
                drop_checks[i] = problem or "its target exists nowhere"
    for i in sorted(drop_rules, reverse=True):
        del new["prohibited"][i]
    if drop_checks:
        why = "; ".join(f"{new['checks'][i].get('id')}: {w}" for i, w in sorted(drop_checks.items()))
        _drop_checks(new, set(drop_checks), untouched_run(spec).evidence, ctx, f"they reference nothing ({why})")
    return _changed(spec_dict, new)


def _strengthen(check: dict[str, Any], oracle: Evidence, untouched: Evidence) -> dict[str, Any] | None:
    """A stricter version of a check that holds on the untouched workspace: one only the oracle's effect satisfies."""
    kind, initial, final = check.get("kind"), oracle.initial_state, oracle.final_state
    candidate: dict[str, Any] | None = None
    if kind in ("file_exists", "file_contains") and check["path"] in final["files"]:
        added = _added_lines(initial["files"].get(check["path"]), final["files"][check["path"]])
        if added:
            candidate = {k: v for k, v in check.items() if k not in ("regex", "text", "case_sensitive")}
            candidate.update(kind="file_contains", text=added[0][:200])
    elif kind == "record":
        before = {r.get("id"): r for r in initial[check["service"]][check["collection"]]}
        for r in final[check["service"]][check["collection"]]:
            if args_match(check["match"], r) and before.get(r.get("id")) != r:
                old = before.get(r.get("id"), {})
                delta = {k: _glob_literal(v) for k, v in r.items() if old.get(k) != v and k != "id"}
                candidate = {**check, "fields": {**check.get("fields", {}), **delta}}
                break
    elif kind == "event_exists":
        fixed = _recompute_event({**check, "start": "", "end": ""}, oracle)
        if isinstance(fixed, dict):
            candidate = fixed
    elif kind == "tool_called":
        candidate = {**check, "min": max(1, check.get("min", 1))}
    if candidate is not None and holds(candidate, oracle) and not holds(candidate, untouched):
        return candidate
    return None


def _is_guard(check: dict[str, Any], oracle: Evidence) -> bool:
    """A check that holds before and after the oracle: it guards something the task must leave alone."""
    return check.get("kind") in GUARD_KINDS or (check.get("kind") != "answer_contains" and holds(check, oracle))


def repair_trivial(spec_dict: Spec, ctx: RepairContext, *, guards_count: bool, max_share: float) -> Spec | None:
    """Strengthen the checks that hold on the untouched workspace where the solution's effect allows it, drop
    those that are not guards (they hold untouched but not after the solution: nothing to preserve), then
    scale the weights of the ones still holding down to `max_share` of the total. With `guards_count` False the
    guard kinds (`unchanged`, `tool_not_called`) are left out of the share, as `checks_discriminate` counts."""
    spec = _spec_or_note(spec_dict, ctx)
    if spec is None:
        return None
    oracle = oracle_run(spec).evidence
    untouched = [untouched_run(spec).evidence, run(spec, [AnswerStep(answer="")]).evidence]
    new = copy.deepcopy(spec_dict)
    drop = set()
    for i, ch in enumerate(new["checks"]):
        if ch.get("kind") in GUARD_KINDS or not any(holds(ch, ev) for ev in untouched):
            continue
        stronger = _strengthen(ch, oracle, untouched[0])
        if stronger is not None and not holds(stronger, untouched[1]):
            ctx.note(f"check {ch['id']} held on the untouched workspace; strengthened to what only the solution achieves")
            new["checks"][i] = stronger
        elif not _is_guard(ch, oracle):
            drop.add(i)
    _drop_checks(new, drop, untouched[0], ctx, "they hold on the untouched workspace")
    return _changed(spec_dict, reweight(new, untouched, ctx, guards_count=guards_count, max_share=max_share) or new)


MAX_TRIVIAL_SHARE = 0.5
"""After repair, answering "Done." earns at most this completion: a score of 0.6 < 0.75."""
MAX_HOLDING_SHARE = 0.25
"""After a `checks_discriminate` repair, non-guard checks holding untouched carry at most this share (battery: < 30 %)."""


def reweight(spec_dict: Spec, untouched: list[Evidence], ctx: RepairContext, *, guards_count: bool, max_share: float) -> Spec | None:
    """Scale the weights of the checks that hold on the untouched workspace down to `max_share` of the total."""
    checks = spec_dict["checks"]
    trivial = [
        i for i, ch in enumerate(checks)
        if (guards_count or ch.get("kind") not in GUARD_KINDS) and any(holds(ch, ev) for ev in untouched)
    ]  # fmt: skip
    t = sum(float(checks[i].get("weight", 1.0)) for i in trivial)
    d = sum(float(ch.get("weight", 1.0)) for i, ch in enumerate(checks) if i not in trivial)
    if not any(not holds(ch, ev) for ch in checks for ev in untouched[:1]) or d == 0:
        ctx.note("every check holds on the untouched workspace: the task tests nothing")
        return None
    if t == 0 or t / (t + d) <= max_share:
        return None
    factor = d * max_share / ((1 - max_share) * t)
    new = copy.deepcopy(spec_dict)
    for i in trivial:
        new["checks"][i]["weight"] = max(round(float(checks[i].get("weight", 1.0)) * factor * 0.999, 4), 1e-4)
    ctx.note(f"weights of the checks that hold untouched scaled by {factor:.3g} (they carried {t / (t + d):.0%} of the weight)")
    return new


@REPAIRERS.register("answer_only_fails")
def repair_answer_only(spec_dict: Spec, outcome: CheckOutcome, ctx: RepairContext) -> Spec | None:
    """Answering "Done." passes: strengthen or drop the checks that hold without work, reweight the guards."""
    return repair_trivial(spec_dict, ctx, guards_count=True, max_share=MAX_TRIVIAL_SHARE)


@REPAIRERS.register("empty_scores_0")
def repair_empty(spec_dict: Spec, outcome: CheckOutcome, ctx: RepairContext) -> Spec | None:
    return repair_trivial(spec_dict, ctx, guards_count=True, max_share=MAX_TRIVIAL_SHARE)


@REPAIRERS.register("checks_discriminate")
def repair_discriminate(spec_dict: Spec, outcome: CheckOutcome, ctx: RepairContext) -> Spec | None:
    """(advisory) Non-guard checks holding untouched carry too much weight: strengthen them or lower their weight."""
    return repair_trivial(spec_dict, ctx, guards_count=False, max_share=MAX_HOLDING_SHARE)


@REPAIRERS.register("prohibited_zeroes")
def repair_prohibited(spec_dict: Spec, outcome: CheckOutcome, ctx: RepairContext) -> Spec | None:
    """A rule the oracle itself must break: narrow it to the targets the solution leaves alone, else drop it."""
    spec = _spec_or_note(spec_dict, ctx)
    if spec is None:
        return None
    return fix_prohibited(spec_dict, spec, ctx)


# --- leakage ------------------------------------------------------------------------------------------------


_NUMBER_TOKEN = re.compile(r"(?<![\w.,:/-])[$€£]?[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\w:/]|[.,-]\d)")
"""A stand-alone number (as the battery reads them), with an optional currency sign."""


def _phrase_pattern(phrase: str) -> str:
    words = phrase.strip().split()
    body = r"\s+".join(re.escape(w) for w in words)
    left = r"(?<!\w)" if re.match(r"\w", words[0]) else ""
    right = r"(?!\w)" if re.search(r"\w$", words[-1]) else ""
    return left + body + right


def _neutral(leak: dict[str, Any]) -> str:
    if leak.get("source") == "user.facts":
        name = re.split(r"[.\[]", str(leak.get("fact", "")))[0].replace("_", " ").strip() or "details"
        return f"the {name} (ask me)"
    return "the figure" if leak.get("source") == "answer_number" else "the answer"


def remove_leak(instruction: str, leak: dict[str, Any], tol: float = 0.0) -> str:
    """The instruction with every rendering of the leaked value replaced by a neutral phrase: the text the battery
    found (`found`), numbers as numbers (any rendering within `tol`), strings as whole words or phrases."""
    value, neutral = leak.get("value"), _neutral(leak)
    number: float | None = None
    try:
        if isinstance(value, int | float) and not isinstance(value, bool):
            number = float(value)
        elif isinstance(value, str) and re.fullmatch(r"[$€£]?[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?", value.strip()):
            number = float(value.strip().lstrip("$€£").replace(",", ""))
    except OverflowError:
        number = None
    if number is not None and math.isfinite(number):
        slack = max(tol, 1e-9 * max(1.0, abs(number)))

        def swap(m: re.Match[str]) -> str:
            token = float(m.group().lstrip("$€£").replace(",", ""))
            return neutral if abs(token - number) <= slack else m.group()

        replaced = _NUMBER_TOKEN.sub(swap, instruction)
        if replaced != instruction:
            return replaced
    for rendering in [leak.get("found"), leak.get("as"), None if number is not None else value]:
        if isinstance(rendering, str) and rendering.strip():
            instruction = re.sub(_phrase_pattern(rendering), neutral.replace("\\", "\\\\"), instruction, flags=re.IGNORECASE)
    return instruction


@REPAIRERS.register("no_leakage")
def repair_leakage(spec_dict: Spec, outcome: CheckOutcome, ctx: RepairContext) -> Spec | None:
    """Replace each leaked expected answer or hidden user fact in the instruction with a neutral phrase
    ("the figure", "the answer", "the <fact> (ask me)"), until the battery's leak finder finds none."""
    from coworkenv.validate.battery import leaks

    spec = _spec_or_note(spec_dict, ctx)
    if spec is None:
        return None
    tolerances = {c.id: c.tol for c in spec.checks if c.kind == "answer_number"}
    instruction, removed = spec.instruction, []
    for _ in range(3):
        found = leaks(spec.model_copy(update={"instruction": instruction}))
        if not found:
            break
        for leak in found:
            instruction = remove_leak(instruction, leak, tolerances.get(leak.get("check"), 0.0))
            removed.append(leak.get("value"))
    if not removed or instruction == spec.instruction:
        ctx.note("no leaked value could be located in the instruction")
        return None
    ctx.note(f"removed leaked value(s) {removed} from the instruction")
    return _changed(spec_dict, {**copy.deepcopy(spec_dict), "instruction": instruction})


# --- capabilities ---------------------------------------------------------------------------------------------


WRITE_TOOLS = {
    "communication": ("mail_send", "mail_reply", "mail_move", "chat_post"),
    "scheduling": ("calendar_create", "calendar_update", "calendar_delete"),
    "authoring": ("files_write", "docs_create", "docs_update", "sheets_update", "sheets_append", "tickets_update", "tickets_create"),
}  # fmt: skip


def _general_capabilities(spec: TaskSpec) -> list[str]:
    """What a task with no declared capability left evidently exercises, from its tools and checks."""
    used = {s.tool for s in spec.solution if isinstance(s, ToolStep)}
    caps = [cap for cap, tools in WRITE_TOOLS.items() if used & set(tools)]
    if any(c.kind in ("answer_number", "sheet_cell", "csv_cell") for c in spec.checks):
        caps.append("data_analysis")
    if any(t in TOOLS and TOOLS.get(t).kind == "read" for t in used):
        caps.append("retrieval")
    return caps


def _add_asked_user(spec_dict: Spec, spec: TaskSpec, ctx: RepairContext) -> bool:
    """A task whose user holds facts and whose oracle asks for them, but that has no asked_user check: add one
    on the reveal keywords the oracle's questions hit."""
    if spec.user is None or not spec.user.facts or not spec.user.reveal:
        return False
    says = [s.say.lower() for s in spec.solution if isinstance(s, SayStep)]
    words = list(dict.fromkeys(k for rule in spec.user.reveal for k in rule.when_any if any(k.lower() in s for s in says)))
    if not words:
        return False
    ids = {c.get("id") for c in spec_dict["checks"]}
    cid = next(f"asked-user{'' if n == 1 else f'-{n}'}" for n in range(1, 100) if f"asked-user{'' if n == 1 else f'-{n}'}" not in ids)
    spec_dict["checks"].append({"id": cid, "kind": "asked_user", "weight": 1.0, "about": words})
    ctx.note(f"added check {cid}: the oracle asks the user about {words}")
    return True


@REPAIRERS.register("capabilities_consistent")
def repair_capabilities(spec_dict: Spec, outcome: CheckOutcome, ctx: RepairContext) -> Spec | None:
    """Recompute the declared capabilities from what the task tests: a capability the battery finds unsupported
    is removed; `multi_turn` is declared where the task asks the user (adding the asked_user check its oracle
    earns when only that is missing); an emptied list is inferred from tools and checks."""
    from coworkenv.validate.battery import Context, capability_problems

    spec = _spec_or_note(spec_dict, ctx)
    if spec is None:
        return None
    new = copy.deepcopy(spec_dict)
    problems = (outcome.details or {}).get("problems") or capability_problems(Context(spec))
    caps = list(spec.capabilities)
    for problem in problems:
        cap, text = problem.get("capability"), str(problem.get("problem", ""))
        if cap == "multi_turn" and "no asked_user check" in text and _add_asked_user(new, spec, ctx):
            continue
        if text.startswith("declared") and cap in caps:
            caps.remove(cap)
        elif cap == "multi_turn" and "does not declare" in text:
            if spec.user is not None and spec.user.facts and spec.user.reveal:
                if not any(c.kind == "asked_user" for c in spec.checks) and not _add_asked_user(new, spec, ctx):
                    ctx.note("the oracle talks to the user but no reveal rule fires: cannot make it multi_turn")
                    return None
                caps.append("multi_turn")
            else:
                ctx.note("the task talks to the user (say steps / asked_user checks) but has no user with facts and reveal rules")
                return None
    caps = list(dict.fromkeys(caps))
    if not caps:
        caps = _general_capabilities(spec)
    if not caps:
        ctx.note("cannot infer any capability the task exercises")
        return None
    if caps != spec.capabilities:
        ctx.note(f"capabilities {spec.capabilities} → {caps} (recomputed from what the task tests)")
    new["capabilities"] = caps
    return _changed(spec_dict, new)


# --- faults ---------------------------------------------------------------------------------------------------


FAULT_RATES = (0.3, 0.2, 0.1, 0.05)
SEED_TRIES = 32


def _fault_profile_ok(spec_dict: Spec, rate: float, seed: int) -> bool:
    spec = parse({**spec_dict, "faults": {"rate": rate, "seed": seed}})
    if spec is None:
        return False
    oracle = run(spec)
    return oracle.grade.score == 1.0 and oracle.faults > 0


@REPAIRERS.register("solvable_under_faults")
def repair_faults(spec_dict: Spec, outcome: CheckOutcome, ctx: RepairContext) -> Spec | None:
    """Lower a fault rate that the retrying oracle cannot get through: the highest of 0.3, 0.2, 0.1, 0.05 (below
    the declared rate), with the first seed from the declared one on, under which the oracle scores 1.0 and
    still meets at least one injected fault."""
    spec = _spec_or_note(spec_dict, ctx)
    if spec is None:
        return None
    rate, seed = spec.faults.rate, spec.faults.seed
    if rate <= 0.0:
        ctx.note("no fault profile to repair")
        return None
    if oracle_run(spec).grade.score != 1.0:
        ctx.note("the oracle fails even without faults: not a fault-profile problem")
        return None
    for candidate in [r for r in sorted({*FAULT_RATES, round(rate / 2, 4)}, reverse=True) if 0 < r < rate and r <= FAULT_RATES[0]]:
        for s in range(seed, seed + SEED_TRIES):
            if _fault_profile_ok(spec_dict, candidate, s):
                ctx.note(
                    f"fault profile rate {rate}, seed {seed} → rate {candidate}, seed {s}: the retrying oracle scores 1.0 through injected faults"
                )
                return _changed(spec_dict, {**copy.deepcopy(spec_dict), "faults": {"rate": candidate, "seed": s}})
    ctx.note(f"no lower fault rate lets the retrying oracle score 1.0 (declared {rate})")
    return None


# --- determinism ----------------------------------------------------------------------------------------------


def non_finite(node: Any, path: str = "") -> list[str]:
    """JSON Pointers of the NaN/Infinity numbers in a spec: they do not survive its JSON serialization (they
    come back as null), so a run of the spec and a run of its own JSON differ."""
    if isinstance(node, float) and not math.isfinite(node):
        return [path]
    if isinstance(node, dict):
        return [p for k, v in node.items() for p in non_finite(v, f"{path}/{str(k).replace('~', '~0').replace('/', '~1')}")]
    if isinstance(node, list):
        return [p for i, v in enumerate(node) for p in non_finite(v, f"{path}/{i}")]
    return []


@REPAIRERS.register("deterministic")
def repair_determinism(spec_dict: Spec, outcome: CheckOutcome, ctx: RepairContext) -> Spec | None:
    """Runs of the spec and of its own JSON differ. Episodes are pure functions of the spec, so the element that
    can make them differ is a value that does not survive serialization (NaN/Infinity). Inside a check, a
    prohibited rule's args or metadata it is removed (the check's key, the rule's argument, the field); inside
    the oracle's solution the intended value is unknown, and with no such value nothing is identifiable: both
    unrepairable."""
    pointers = non_finite(spec_dict)
    if not pointers:
        ctx.note("no identifiable non-deterministic element: the spec holds no value that changes on serialization")
        return None
    in_solution = [p for p in pointers if p.startswith("/solution/") or p.startswith("/workspace/")]
    if in_solution:
        ctx.note(f"non-finite value(s) at {in_solution} in the oracle or the workspace: the intended value is unknown")
        return None
    new = copy.deepcopy(spec_dict)
    for pointer in sorted(pointers, reverse=True):
        parts = pointer.split("/")
        if parts[1] == "prohibited" and len(parts) >= 5 and parts[3] == "args":
            pointer = "/".join(parts[:5])
        elif parts[1] == "checks" and len(parts) >= 4:
            pointer = "/".join(parts[:4])
        try:
            jsonpatch.JsonPatch([{"op": "remove", "path": pointer}]).apply(new, in_place=True)
        except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException):
            continue
        ctx.note(f"removed {pointer}: a NaN/Infinity there reads back as null")
    return _changed(spec_dict, new)


# --- schema ---------------------------------------------------------------------------------------------------


def _close(name: Any, known: Iterable[str], cutoff: float = 0.85) -> str | None:
    """The closest known name to a misspelled one, if it is close (difflib ratio ≥ cutoff)."""
    if not isinstance(name, str):
        return None
    close = difflib.get_close_matches(name, list(known), n=1, cutoff=cutoff)
    return close[0] if close else None


@REPAIRERS.register("schema")
def repair_schema(spec_dict: Spec, outcome: CheckOutcome, ctx: RepairContext) -> Spec | None:
    """Mechanical schema fixes: unknown top-level fields dropped, unknown tool and capability names mapped to
    the closest known one (or dropped), duplicate tools and check ids made unique, weights ≤ 0 set to 1,
    difficulty and fault rate clamped. Anything else (a missing final answer, an unknown check kind) is not
    mechanical."""
    if not isinstance(spec_dict, dict):
        ctx.note("the spec is not a JSON object")
        return None
    new = copy.deepcopy(spec_dict)
    if non_finite(new):  # the schema refuses NaN/Infinity: remove them where their intent is clear
        fixed = repair_determinism(new, outcome, ctx)
        if fixed is None:
            return None
        new = fixed
    extra = sorted(k for k in new if k not in SCHEMA_FIELDS)
    for key in extra:
        del new[key]
    if extra:
        ctx.note(f"dropped unknown top-level field(s) {extra}")
    solution_tools = set(_tools_for(new))
    if isinstance(new.get("tools"), list):
        tools: list[str] = []
        for name in new["tools"]:
            fixed = name if isinstance(name, str) and name in TOOLS else _close(name, TOOLS.names())
            if fixed is None or (fixed != name and fixed not in solution_tools and name not in solution_tools):
                ctx.note(f"dropped unknown tool {name!r} from `tools`")
                continue
            if fixed != name:
                ctx.note(f"tool {name!r} → {fixed!r}")
            if fixed not in tools:
                tools.append(fixed)
        tools += [t for t in solution_tools if t in TOOLS and t not in tools]
        new["tools"] = tools
    if isinstance(new.get("capabilities"), list):
        caps: list[str] = []
        for name in new["capabilities"]:
            fixed = name if isinstance(name, str) and name in CAPABILITIES else _close(name, CAPABILITIES.names())
            if fixed is None:
                ctx.note(f"dropped unknown capability {name!r}")
            elif fixed not in caps:
                caps.append(fixed)
        new["capabilities"] = caps
    if isinstance(new.get("checks"), list):
        seen: set[str] = set()
        for ch in new["checks"]:
            if not isinstance(ch, dict):
                continue
            weight = ch.get("weight", 1.0)
            if isinstance(weight, bool) or not isinstance(weight, int | float) or weight <= 0:
                ctx.note(f"check {ch.get('id')}: weight {weight!r} → 1.0")
                ch["weight"] = 1.0
            cid = ch.get("id")
            if isinstance(cid, str) and cid in seen:
                n = 2
                while f"{cid}-{n}" in seen:
                    n += 1
                ctx.note(f"duplicate check id {cid!r} → {cid}-{n}")
                ch["id"] = f"{cid}-{n}"
            if isinstance(ch.get("id"), str):
                seen.add(ch["id"])
    if isinstance(new.get("difficulty"), int) and not isinstance(new["difficulty"], bool):
        new["difficulty"] = min(5, max(1, new["difficulty"]))
    faults = new.get("faults")
    if isinstance(faults, dict) and isinstance(faults.get("rate"), int | float):
        faults["rate"] = min(1.0, max(0.0, float(faults["rate"])))
    solution = new.get("solution")
    if isinstance(solution, list):
        answers = [i for i, s in enumerate(solution) if isinstance(s, dict) and "answer" in s]
        if not answers:
            ctx.note("the solution has no final `answer` step: not a mechanical fix")
        elif answers != [len(solution) - 1]:
            last = answers[-1]
            new["solution"] = [s for i, s in enumerate(solution) if i not in answers[:-1] and i <= last]
            ctx.note("solution: kept only the last `answer` step, at the end")
    return _changed(spec_dict, new)
