"""The validation battery (DESIGN §6): one function per code in `BATTERY_CODES`, run on one task.

Every check is a function of a lazily built context (the oracle run, the empty run, …, each computed once
and shared) that returns `(passed, details, message)`. `validate_spec` runs them all and never raises on a
spec: an exception inside a check becomes a failed outcome of that check with the exception in `details`.

Rules that are not obvious from the code descriptions in `results.py`:

* **references** — solution tool steps use tools listed in `tools` (and known to the catalog); prohibited
  rules and `tool_called` / `tool_not_called` checks name catalog tools, and their `args` name parameters of
  that tool (a misspelled argument makes a rule no valid call can break); `tool_called` names a tool the task
  allows. Check targets must exist in the initial workspace or in the oracle's final state: `mail_in_folder`
  ids, the record a `record` check matches, the sheet (and the columns) of `sheet_cell`, the event id of an
  id-based `event_absent`, the path of `file_exists` / `file_contains` / `file_equals` / `csv_cell` /
  `unchanged` (path). `file_absent` paths only need to be well-formed: "never create X" is legitimate.
  Every missing reference is one entry of `details["missing"]`.
* **checks_discriminate** — every check is evaluated (by the grading engine, bypassing the empty-trajectory
  rule) on the evidence of an episode whose agent only answers ""; the checks other than `unchanged` /
  `tool_not_called` that already hold are listed in `details["holding"]`. Guard checks ("keep this record",
  "send nothing there") hold by design, so the check fails only when the holding ones carry at least
  `TRIVIAL_WEIGHT_SHARE` (30 %) of the weight: then doing nothing already earns a large part of the completion.
* **prefix_partial** — effects are the oracle's tool steps of kind `write` / `destructive`. With two or more,
  the oracle's steps up to and including the first effect, then its answer step, must give
  0 < completion < 1. Fewer than two effects: passes, `{"applicable": false}`.
* **prohibited_zeroes** — per rule: the oracle plus one call that matches the rule (before the answer) must
  give safety 0 and score 0 (`details["rules"]`, one entry per rule index); a rule the oracle itself breaks
  fails the check too (`details["oracle_violates"]`). No rules: passes, not applicable.
* **deterministic** — the oracle is run twice, on the given spec and on a fresh parse of its JSON; both runs
  and a replay of the first trajectory on the fresh parse must give the same evidence hash and score.
* **solvable_under_faults** — `faults.rate > 0`: the retrying oracle must score 1.0; if its run met no
  injected fault at all the declared fault profile is fake: `details["faults_injected"] == 0` with an
  advisory note, but the check still passes. `rate == 0`: passes, not applicable.
* **no_leakage** — see `leaks()`: numbers are compared as numbers, strings as whole words/phrases,
  case-insensitively.
* **capabilities_consistent** — see `capability_problems()`.

A task is valid iff every mandatory check passed; `discrimination` is the share of the applicable
discriminating checks that passed (a check is not applicable when its details say `"applicable": false`).
"""

from __future__ import annotations

import json
import math
import re
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from pydantic import ValidationError

from coworkenv.spec.task import AnswerStep, SayStep, TaskSpec, ToolStep
from coworkenv.validate.results import BATTERY, BATTERY_CODES, BatteryCheck, CheckOutcome, TaskValidation

MAX_SPEC_CHARS = 20_000_000
"""Larger inputs are rejected by `validate_spec_json` before parsing (the sandbox bounds memory anyway)."""

MIN_ANSWER_CHARS = 3
MIN_FACT_CHARS = 2
ANSWER_ONLY_TEXT = "Done."

CheckResultT = tuple[bool, dict[str, Any], str]


# --- shared runs, computed once per task -----------------------------------------------------------------


class _Failed:
    def __init__(self, exc: BaseException):
        self.exc = exc


@dataclass
class Run:
    trajectory: Any
    evidence: Any
    grade: Any


@dataclass
class Context:
    spec: TaskSpec
    _memo: dict[str, Any] = field(default_factory=dict)

    def _once(self, key: str, build: Callable[[], Any]) -> Any:
        if key not in self._memo:
            try:
                self._memo[key] = build()
            except MemoryError:  # the sandbox reports it as `sandbox_memory`; never a verdict about the task
                raise
            except Exception as exc:  # noqa: BLE001 — re-raised in every check that needs it
                self._memo[key] = _Failed(exc)
        value = self._memo[key]
        if isinstance(value, _Failed):
            raise value.exc
        return value

    def run(self, steps: list | None = None, *, spec: TaskSpec | None = None, agent: str = "oracle") -> Run:
        from coworkenv.agents import make_policy
        from coworkenv.env.runner import run_episode
        from coworkenv.grading.score import grade

        spec = spec or self.spec
        policy = make_policy(agent, spec) if steps is None else make_policy("oracle", spec, steps=steps)
        trajectory, evidence = run_episode(spec, policy)
        return Run(trajectory, evidence, grade(spec, evidence))

    @property
    def oracle(self) -> Run:
        return self._once("oracle", self.run)

    @property
    def null(self) -> Run:
        return self._once("null", lambda: self.run(agent="null"))

    @property
    def effects(self) -> list[int]:
        """Indices of the solution's write/destructive tool steps."""
        from coworkenv.workspace.tools import TOOLS

        return [
            i for i, s in enumerate(self.spec.solution)
            if isinstance(s, ToolStep) and s.tool in TOOLS and TOOLS.get(s.tool).kind != "read"
        ]  # fmt: skip

    def oracle_final_state(self) -> dict[str, Any] | None:
        try:
            return self.oracle.evidence.final_state
        except Exception:  # noqa: BLE001 — references then look at the initial state only
            return None


def _grade_summary(g: Any) -> dict[str, Any]:
    return {"score": g.score, "completion": round(g.completion, 6), "safety": g.safety, "robustness": round(g.robustness, 6)}


def _failed_checks(g: Any) -> list[dict[str, str]]:
    return [{"id": c.id, "reason": c.reason} for c in g.checks if not c.passed]


# --- registration ----------------------------------------------------------------------------------------


def battery_check(code: str) -> Callable[[Callable[[Context], CheckResultT]], Callable[[Context], CheckResultT]]:
    if code not in BATTERY_CODES:
        raise ValueError(f"unknown battery code {code!r}")

    def decorator(fn: Callable[[Context], CheckResultT]) -> Callable[[Context], CheckResultT]:
        BATTERY.add(code, BatteryCheck(code, *BATTERY_CODES[code], fn))
        return fn

    return decorator


# --- schema & references ---------------------------------------------------------------------------------


@battery_check("schema")
def check_schema(ctx: Context) -> CheckResultT:
    # A spec object may have been built without validation (model_construct): round-trip it strictly.
    TaskSpec.model_validate_json(ctx.spec.to_json())
    return True, {}, "the spec parses as a TaskSpec"


def _schema_failure(exc: Exception) -> CheckResultT:
    if isinstance(exc, ValidationError):
        errors = [
            {"loc": [p if isinstance(p, int) else str(p) for p in e.get("loc", ())], "msg": str(e.get("msg", "")), "type": str(e.get("type", ""))}
            for e in exc.errors(include_url=False)[:50]
        ]  # fmt: skip
        from coworkenv.errors import format_validation_error

        return False, {"errors": errors, "error_count": exc.error_count()}, f"not a valid TaskSpec: {format_validation_error(exc)}"
    return False, {"errors": [{"loc": [], "msg": str(exc)[:2000], "type": type(exc).__name__}]}, f"not a valid TaskSpec: {str(exc)[:500]}"


def _records(state: dict[str, Any] | None, service: str, collection: str) -> list[dict[str, Any]]:
    if not state:
        return []
    value = state.get(service, {}).get(collection, [])
    return value if isinstance(value, list) else []


def _tool_params(tool: str) -> set[str]:
    from coworkenv.workspace.tools import TOOLS

    return set(TOOLS.get(tool).args.model_fields)


@battery_check("references")
def check_references(ctx: Context) -> CheckResultT:
    from coworkenv.grading.matching import args_match
    from coworkenv.spec.workspace import COLLECTIONS
    from coworkenv.workspace.paths import is_normal_path
    from coworkenv.workspace.tools import TOOLS

    spec = ctx.spec
    missing: list[dict[str, Any]] = []

    def miss(where: str, ref: Any, problem: str, **extra: Any) -> None:
        missing.append({"where": where, "ref": ref, "problem": problem, **extra})

    allowed = set(spec.tools)
    for i, step in enumerate(spec.solution):
        if isinstance(step, ToolStep):
            if step.tool not in TOOLS:
                miss(f"solution[{i}]", step.tool, "unknown tool")
            elif step.tool not in allowed:
                miss(f"solution[{i}]", step.tool, "tool not in the task's tools")

    def tool_and_args(where: str, tool: str, args: dict[str, Any] | None) -> None:
        if tool not in TOOLS:
            miss(where, tool, "unknown tool")
            return
        for name in args or {}:
            if name not in _tool_params(tool):
                miss(f"{where}.args", name, f"not a parameter of {tool}")

    for i, rule in enumerate(spec.prohibited):
        tool_and_args(f"prohibited[{i}]", rule.tool, rule.args)

    initial = spec.initial_state
    final = ctx.oracle_final_state()
    states = [s for s in (initial, final) if s]

    def any_state(fn: Callable[[dict[str, Any]], bool]) -> bool:
        return any(fn(s) for s in states)

    named_paths = {str(v) for s in spec.solution if isinstance(s, ToolStep) for k, v in s.args.items() if k in ("path", "src", "dst")}

    for i, check in enumerate(spec.checks):
        where = f"checks[{i}]"
        extra = {"check": check.id, "kind": check.kind}
        kind = check.kind
        if kind in ("tool_called", "tool_not_called"):
            tool_and_args(where, check.tool, getattr(check, "args", None))
            if kind == "tool_called" and check.tool in TOOLS and check.tool not in allowed:
                miss(where, check.tool, "tool_called names a tool the task does not allow", **extra)
        elif kind == "mail_in_folder":
            for mid in check.ids:
                if not any_state(lambda s, mid=mid: any(m.get("id") == mid for m in _records(s, "mail", "messages"))):
                    miss(where, mid, "no such mail id, initially or after the oracle", **extra)
        elif kind == "record":
            if COLLECTIONS.get(check.service) != check.collection:
                miss(where, f"{check.service}.{check.collection}", "no such collection", **extra)
            elif not any_state(lambda s, c=check: any(args_match(c.match, r) for r in _records(s, c.service, c.collection))):
                miss(where, check.match, f"no {check.collection} record matches, initially or after the oracle", **extra)
        elif kind == "sheet_cell":
            sheets = [s.get("sheets", {}).get(check.sheet) for s in states]
            sheets = [s for s in sheets if isinstance(s, dict)]
            if not sheets:
                miss(where, check.sheet, "no such sheet, initially or after the oracle", **extra)
            else:
                columns = {c for s in sheets for c in s.get("columns", [])}
                for column in [*check.match, check.column]:
                    if column not in columns:
                        miss(where, f"{check.sheet}.{column}", "no such column in the sheet", **extra)
        elif kind == "event_absent":
            target = check.target_id
            if target is not None and not any_state(lambda s, t=target: any(e.get("id") == t for e in _records(s, "calendar", "events"))):
                miss(where, target, "event id exists neither initially nor after the oracle: the check holds trivially", **extra)
        elif kind in ("file_exists", "file_contains", "file_equals", "csv_cell", "file_absent") or (kind == "unchanged" and check.path is not None):
            path = check.path
            if not is_normal_path(path):
                miss(where, path, "path is not relative and normalized", **extra)
            elif kind != "file_absent" and not any_state(lambda s, p=path: p in s.get("files", {})) and path not in named_paths:
                miss(where, path, "file exists nowhere: not initially, not after the oracle, not in any solution step", **extra)
    if missing:
        listed = "; ".join(f"{m['where']}: {m['ref']} ({m['problem']})" for m in missing[:5])
        return False, {"missing": missing}, f"{len(missing)} missing reference(s): {listed}"
    return True, {"missing": []}, "all tools, check targets and rules refer to things that exist"


# --- the consistency gate, piece by piece ----------------------------------------------------------------


@battery_check("oracle_scores_1")
def check_oracle(ctx: Context) -> CheckResultT:
    g = ctx.oracle.grade
    details = {**_grade_summary(g), "failed_checks": _failed_checks(g), "violations": [v.rule for v in g.violations]}
    if g.score == 1.0:
        return True, details, "the oracle scores 1.0"
    why = ", ".join(f"{c['id']} ({c['reason']})" for c in details["failed_checks"]) or f"safety {g.safety}, robustness {g.robustness}"
    return False, details, f"the oracle scores {g.score}, not 1.0: {why}"


@battery_check("empty_scores_0")
def check_empty(ctx: Context) -> CheckResultT:
    g = ctx.null.grade
    if g.score == 0.0:
        return True, {"score": g.score}, "an empty trajectory scores 0.0"
    return False, {"score": g.score}, f"an empty trajectory scores {g.score}, not 0.0"


@battery_check("answer_only_fails")
def check_answer_only(ctx: Context) -> CheckResultT:
    from coworkenv.grading.consistency import run_steps

    g = run_steps(ctx.spec, [AnswerStep(answer=ANSWER_ONLY_TEXT)])
    details = {**_grade_summary(g), "passing_checks": [c.id for c in g.checks if c.passed]}
    if not g.passed:
        return True, details, f"answering only {ANSWER_ONLY_TEXT!r} scores {g.score} and does not pass"
    return (
        False,
        details,
        (
            f"answering only {ANSWER_ONLY_TEXT!r} passes with {g.score}: checks {', '.join(details['passing_checks'])} hold without any work; "
            "add checks on the task's effects or lower the weight of preservation checks"
        ),
    )


TRIVIAL_WEIGHT_SHARE = 0.3
"""Checks that hold on the untouched workspace may carry less than this share of the weight."""


@battery_check("checks_discriminate")
def check_discriminate(ctx: Context) -> CheckResultT:
    from coworkenv.grading.checks import evaluate

    evidence = ctx.null.evidence
    holding = []
    for check in ctx.spec.checks:
        if check.kind in ("unchanged", "tool_not_called"):
            continue
        passed, reason = evaluate(check, evidence)
        if passed:
            holding.append({"id": check.id, "kind": check.kind, "weight": check.weight, "reason": reason})
    total = sum(c.weight for c in ctx.spec.checks)
    details = {"holding": holding, "holding_weight_share": round(sum(h["weight"] for h in holding) / total, 6) if total else 0.0}
    if details["holding_weight_share"] < TRIVIAL_WEIGHT_SHARE:
        # Guards ("leave that record as it is", "send nothing to X") hold before the agent acts by design;
        # they only make a task trivial when doing nothing already earns a large share of the completion.
        return True, details, f"checks holding on the untouched workspace carry {details['holding_weight_share']:.0%} of the weight"
    return False, details, f"{len(holding)} check(s) already hold on the untouched workspace: {', '.join(h['id'] for h in holding)}"


@battery_check("prefix_partial")
def check_prefix(ctx: Context) -> CheckResultT:
    effects = ctx.effects
    if len(effects) < 2:
        return True, {"applicable": False, "effects": len(effects)}, f"not applicable: the oracle has {len(effects)} effect(s)"
    from coworkenv.grading.consistency import run_steps

    steps = [*ctx.spec.solution[: effects[0] + 1], ctx.spec.solution[-1]]
    g = run_steps(ctx.spec, steps)
    details = {
        "applicable": True, "effects": len(effects), "prefix_steps": len(steps), "completion": round(g.completion, 6),
        "failed_checks": [c["id"] for c in _failed_checks(g)],
    }  # fmt: skip
    if 0.0 < g.completion < 1.0:
        return True, details, f"the oracle prefix up to its first effect gets completion {g.completion:.3f}"
    if g.completion >= 1.0:
        return False, details, "the oracle prefix up to its first effect already completes the task: the later effects are not checked"
    return False, details, "the oracle prefix up to its first effect gets no credit at all: the checks do not reward partial progress"


@battery_check("prohibited_zeroes")
def check_prohibited(ctx: Context) -> CheckResultT:
    from coworkenv.grading.consistency import run_steps, violating_step

    spec = ctx.spec
    if not spec.prohibited:
        return True, {"applicable": False, "rules": []}, "not applicable: the task has no prohibited rules"
    rules: list[dict[str, Any]] = []
    problems: list[str] = []
    for i, rule in enumerate(spec.prohibited):
        entry: dict[str, Any] = {"rule": i, "tool": rule.tool}
        try:
            step = violating_step(rule)
        except ValueError as exc:
            entry.update(ok=False, error=str(exc))
            problems.append(f"prohibited[{i}]: {exc}")
            rules.append(entry)
            continue
        g = run_steps(spec, [*spec.solution[:-1], step, spec.solution[-1]])
        ok = g.safety == 0.0 and g.score == 0.0
        entry.update(ok=ok, call=step.args, safety=g.safety, score=g.score)
        if not ok:
            problems.append(f"prohibited[{i}] ({rule.tool}) violated on top of the oracle: safety {g.safety}, score {g.score}")
        rules.append(entry)
    oracle_violates: list[int] = []
    try:
        oracle_violates = sorted({v.rule for v in ctx.oracle.grade.violations})
    except Exception as exc:  # noqa: BLE001
        problems.append(f"oracle run failed: {type(exc).__name__}: {exc}")
    for i in oracle_violates:
        problems.append(f"the oracle itself breaks prohibited[{i}] ({spec.prohibited[i].tool})")
    details = {"applicable": True, "rules": rules, "oracle_violates": oracle_violates}
    if problems:
        return False, details, "; ".join(problems)
    return True, details, f"each of the {len(rules)} prohibited rule(s), violated on top of the oracle, zeroes the score"


@battery_check("deterministic")
def check_deterministic(ctx: Context) -> CheckResultT:
    from coworkenv.env.trajectory import replay
    from coworkenv.grading.score import grade

    first = ctx.oracle
    fresh = TaskSpec.model_validate_json(ctx.spec.to_json())
    second = ctx.run(spec=fresh)
    replayed = replay(fresh, first.trajectory)
    replay_grade = grade(fresh, replayed)
    runs = {
        "first": {"evidence_hash": first.evidence.evidence_hash, "score": first.grade.score},
        "second": {"evidence_hash": second.evidence.evidence_hash, "score": second.grade.score},
        "replay": {"evidence_hash": replayed.evidence_hash, "score": replay_grade.score},
    }
    hashes = {r["evidence_hash"] for r in runs.values()}
    scores = {r["score"] for r in runs.values()}
    outcomes = [{c.id: c.passed for c in g.checks} for g in (first.grade, second.grade, replay_grade)]
    differing = sorted(cid for cid in outcomes[0] if len({o.get(cid) for o in outcomes}) > 1)
    details = {"runs": runs, "same_hash": len(hashes) == 1, "same_score": len(scores) == 1, "differing_checks": differing}
    if len(hashes) == 1 and len(scores) == 1:
        return True, details, "two oracle runs and a replay give the same evidence hash and score"
    return False, details, f"oracle runs differ: {len(hashes)} evidence hashes, scores {sorted(scores)}"


@battery_check("solvable_under_faults")
def check_faults(ctx: Context) -> CheckResultT:
    rate = ctx.spec.faults.rate
    if rate <= 0.0:
        return True, {"applicable": False, "rate": rate}, "not applicable: no faults are injected"
    run = ctx.oracle
    injected = sum(1 for c in run.evidence.calls if c.fault)
    details: dict[str, Any] = {"applicable": True, "rate": rate, "seed": ctx.spec.faults.seed, "score": run.grade.score,
                               "calls": len(run.evidence.calls), "faults_injected": injected}  # fmt: skip
    if run.grade.score != 1.0:
        return False, details, f"with faults (rate {rate}), the retrying oracle scores {run.grade.score}, not 1.0"
    if injected == 0:
        details["note"] = "advisory: the fault profile injected no fault into the oracle's run; its declared robustness is not exercised"
        return True, details, f"solvable under faults, but rate {rate} with seed {ctx.spec.faults.seed} injects no fault into the oracle run"
    return True, details, f"the retrying oracle scores 1.0 through {injected} injected fault(s)"


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


# --- capabilities ----------------------------------------------------------------------------------------

DATA_CHECKS = ("answer_number", "sheet_cell", "csv_cell", "file_exists", "file_absent", "file_contains", "file_equals")
MULTI_STEP_EFFECTS = 4


def capability_problems(ctx: Context) -> list[dict[str, str]]:
    """Declared capabilities against what the task tests.

    * `multi_turn` ⇒ a `user` with facts, at least one `reveal` rule and at least one `asked_user` check.
    * an `asked_user` check or a `say` step ⇒ `multi_turn` is declared.
    * `robustness` ⇒ `faults.rate > 0`.
    * `safety` ⇒ at least one prohibited rule or `tool_not_called` check.
    * `multi_step` ⇒ the oracle has ≥ 4 write/destructive tool steps spanning ≥ 2 services (DESIGN §8).
    * `scheduling` ⇒ the oracle calls a calendar tool.
    * `data_analysis` ⇒ an `answer_number`, `sheet_cell`, `csv_cell` or `file_*` check.
    """
    from coworkenv.workspace.tools import TOOLS

    spec = ctx.spec
    caps = set(spec.capabilities)
    kinds = {c.kind for c in spec.checks}
    problems: list[dict[str, str]] = []

    def problem(cap: str, text: str) -> None:
        problems.append({"capability": cap, "problem": text})

    says = any(isinstance(s, SayStep) for s in spec.solution)
    if "multi_turn" in caps:
        if spec.user is None:
            problem("multi_turn", "declared but the task has no simulated user")
        else:
            if not spec.user.facts:
                problem("multi_turn", "declared but the user holds no facts")
            if not spec.user.reveal:
                problem("multi_turn", "declared but the user has no reveal rule")
        if "asked_user" not in kinds:
            problem("multi_turn", "declared but no asked_user check")
    elif "asked_user" in kinds or says:
        problem("multi_turn", "the task has " + ("asked_user checks" if "asked_user" in kinds else "say steps") + " but does not declare multi_turn")
    if "robustness" in caps and spec.faults.rate <= 0.0:
        problem("robustness", "declared but faults.rate is 0")
    if "safety" in caps and not spec.prohibited and "tool_not_called" not in kinds:
        problem("safety", "declared but there is no prohibited rule and no tool_not_called check")
    if "multi_step" in caps:
        steps = [spec.solution[i] for i in ctx.effects]
        services = {TOOLS.get(s.tool).service for s in steps}
        if len(steps) < MULTI_STEP_EFFECTS or len(services) < 2:
            problem("multi_step", f"declared but the oracle has {len(steps)} effect(s) across {len(services)} service(s); needs ≥ 4 across ≥ 2")
    if "scheduling" in caps and not any(isinstance(s, ToolStep) and s.tool.startswith("calendar_") for s in spec.solution):
        problem("scheduling", "declared but the oracle never uses a calendar tool")
    if "data_analysis" in caps and not kinds & set(DATA_CHECKS):
        problem("data_analysis", "declared but no answer_number, sheet_cell, csv_cell or file_* check")
    return problems


@battery_check("capabilities_consistent")
def check_capabilities(ctx: Context) -> CheckResultT:
    problems = capability_problems(ctx)
    declared = set(ctx.spec.capabilities)
    details = {
        "declared": list(ctx.spec.capabilities),
        "problems": problems,
        "unsupported": sorted({p["capability"] for p in problems if p["capability"] in declared}),
        "missing": sorted({p["capability"] for p in problems if p["capability"] not in declared}),
    }
    if not problems:
        return True, details, "the declared capabilities match what the task tests"
    return False, details, "; ".join(f"{p['capability']}: {p['problem']}" for p in problems)


# --- running the battery ---------------------------------------------------------------------------------


def _outcome(task_id: str, code: str, passed: bool, details: dict[str, Any], message: str) -> CheckOutcome:
    severity, discriminating, _ = BATTERY_CODES[code]
    return CheckOutcome(
        task_id=task_id, code=code, passed=passed, severity=severity, discriminating=discriminating,
        details=_jsonable(details), message=clean_text(message),
    )  # fmt: skip


def clean_text(text: str) -> str:
    """Valid Unicode for files and Parquet: lone surrogates (legal in JSON escapes, not in UTF-8) become '?'."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")


def _jsonable(value: Any, depth: int = 0) -> Any:
    """Plain JSON data: valid UTF-8 strings, string keys, non-finite floats as strings, bounded depth."""
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, str):
        return clean_text(value)
    if depth >= 32:
        return clean_text(str(value)[:2000])
    if isinstance(value, dict):
        return {clean_text(str(k)): _jsonable(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_jsonable(v, depth + 1) for v in value]
    return clean_text(str(value)[:2000])


def _exception_details(exc: BaseException) -> dict[str, Any]:
    tb = traceback.format_exception(type(exc), exc, exc.__traceback__)
    return {"exception": type(exc).__name__, "error": str(exc)[:2000], "traceback": "".join(tb)[-4000:]}


def run_battery(spec: TaskSpec) -> TaskValidation:
    ctx = Context(spec)
    results = []
    for code in BATTERY_CODES:
        check = BATTERY.get(code)
        try:
            passed, details, message = check.fn(ctx)
        except MemoryError:
            raise
        except (Exception, RecursionError) as exc:  # noqa: BLE001 — a crash is a failed check, not a crashed battery
            if code == "schema":
                passed, details, message = _schema_failure(exc)
            else:
                passed, details, message = False, _exception_details(exc), f"{code} raised {type(exc).__name__}: {str(exc)[:300]}"
        results.append(_outcome(spec.id, code, passed, details, message))
    evidence_hash = ""
    try:
        evidence_hash = ctx.oracle.evidence.evidence_hash
    except Exception:  # noqa: BLE001
        pass
    return _verdict(spec.id, results, evidence_hash)


def _verdict(task_id: str, results: list[CheckOutcome], evidence_hash: str = "") -> TaskValidation:
    valid = all(r.passed for r in results if r.severity == "mandatory")
    applicable = [r for r in results if r.discriminating and r.details.get("applicable", True) is not False]
    if not any(r.code == "schema" and r.passed for r in results):
        discrimination = 0.0
    else:
        discrimination = sum(r.passed for r in applicable) / len(applicable) if applicable else 1.0
    return TaskValidation(task_id=task_id, valid=valid, discrimination=round(discrimination, 6), results=results, evidence_hash=evidence_hash)


def _task_id_of(data: Any) -> str:
    if isinstance(data, dict):
        value = data.get("id")
        if isinstance(value, str):
            return clean_text(value[:200])
        if value is not None and not isinstance(value, dict | list):
            return clean_text(str(value)[:200])
    return ""


def rejected(task_id: str, code: str, details: dict[str, Any], message: str) -> TaskValidation:
    """A task that never reached the battery (unparseable, or its sandbox failed): one failed row, invalid.

    `code` is a battery code (`schema`) or a sandbox error code (`sandbox_timeout`, …); the latter is mandatory
    and not discriminating."""
    if code in BATTERY_CODES:
        outcome = _outcome(task_id, code, False, details, message)
    else:
        outcome = CheckOutcome(task_id=task_id, code=code, passed=False, severity="mandatory", discriminating=False,
                               details=_jsonable(details), message=clean_text(message))  # fmt: skip
    return TaskValidation(task_id=task_id, valid=False, discrimination=0.0, results=[outcome])


def validate_spec(spec: TaskSpec | dict[str, Any]) -> TaskValidation:
    """Run the whole battery on one task. A dict that is not a valid TaskSpec gives one failed `schema` row."""
    if isinstance(spec, TaskSpec):
        return run_battery(spec)
    task_id = _task_id_of(spec)
    if not isinstance(spec, dict):
        return rejected(task_id, "schema", {"errors": [{"loc": [], "msg": f"expected a JSON object, got {type(spec).__name__}", "type": "type"}]},
                        f"not a valid TaskSpec: expected a JSON object, got {type(spec).__name__}")  # fmt: skip
    try:
        parsed = TaskSpec.model_validate(spec)
    except (Exception, RecursionError) as exc:  # noqa: BLE001
        passed, details, message = _schema_failure(exc)
        return rejected(task_id, "schema", details, message)
    return run_battery(parsed)


def validate_spec_json(text: str) -> dict[str, Any]:
    """`validate_spec` on one JSON text, returning the JSON-able TaskValidation; never raises."""
    try:
        if not isinstance(text, str | bytes | bytearray):
            raise TypeError(f"expected JSON text, got {type(text).__name__}")
        if len(text) > MAX_SPEC_CHARS:
            result = rejected("", "schema", {"errors": [{"loc": [], "msg": f"larger than {MAX_SPEC_CHARS} characters", "type": "too_large"}],
                                              "chars": len(text)}, f"not a valid TaskSpec: larger than {MAX_SPEC_CHARS} characters")  # fmt: skip
            return result.model_dump(mode="json")
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as exc:
            msg = f"not valid JSON: {str(exc)[:500]}"
            result = rejected("", "schema", {"errors": [{"loc": [], "msg": msg, "type": "json_invalid"}]}, f"not a valid TaskSpec: {msg}")
            return result.model_dump(mode="json")
        return validate_spec(data).model_dump(mode="json")
    except MemoryError:
        raise
    except (Exception, RecursionError) as exc:  # noqa: BLE001 — the last line of defence: still an answer
        message = f"validation crashed: {type(exc).__name__}: {str(exc)[:300]}"
        return rejected("", "schema", {**_exception_details(exc), "internal_error": True}, message).model_dump(mode="json")
