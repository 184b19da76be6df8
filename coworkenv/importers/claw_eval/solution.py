"""An oracle derived from the mapped checks, where they determine one: reads that `tool_called` asks for, the writes
that state checks describe (a record updated or created, a draft or a message, an event), and an answer holding the
texts, numbers and labels the answer checks expect. Whatever the checks leave open (a regex with no example, a write
whose arguments nothing states) means no oracle; the grading-consistency gate then proves what was derived."""

from __future__ import annotations

import json
from typing import Any

from coworkenv.checks.regex import regex_problem, regex_search
from coworkenv.checks.text import phrase_find
from coworkenv.workspace.tools import TOOLS

FILLER = "Prepared from the workspace records named above."
GLOB = set("*?[")


BY_ID = {
    "mail_read": ("mail", "messages"),
    "contacts_get": ("contacts", "people"),
    "docs_read": ("docs", "docs"),
    "tickets_get": ("tickets", "tickets"),
}
"""The read tools that take a record's id: the service and list they read."""


class NoOracle(Exception):
    """The checks do not determine an oracle; the message says which one and why."""


class Plan:
    def __init__(self, ws: dict[str, Any]):
        self.ws = ws
        self.reads: list[dict[str, Any]] = []
        self.writes: list[dict[str, Any]] = []
        self.first: list[str] = []  # parts the answer must start with (an unlabelled number is the first number)
        self.parts: list[str] = []
        self.min_chars = 0
        self.min_words = 0
        self.patterns: list[tuple[str, str]] = []
        self.forbidden: list[tuple[str, list[str]]] = []
        self.judged: list[str] = []


def _ids(ws: dict[str, Any], service: str, key: str) -> list[str]:
    return [str(r["id"]) for r in ws.get(service, {}).get(key, [])]


def _collection(ws: dict[str, Any], pin: dict[str, Any]) -> str:
    collections = ws.get("records", {}).get("collections", {})
    name = pin.get("collection") or next(iter(collections), None)
    if name not in collections:
        raise NoOracle("a records tool with no collection to read")
    return name


def read_args(tool: str, pin: dict[str, Any], ws: dict[str, Any], n: int) -> list[dict[str, Any]]:
    """n argument sets for a read tool, over distinct records where there are some."""

    def over(values: list[Any], make: Any) -> list[dict[str, Any]]:
        if not values:
            raise NoOracle(f"{tool}: nothing in the workspace to read")
        return [{**make(values[i % len(values)]), **pin} for i in range(n)]

    if tool in ("mail_search", "contacts_search", "docs_search", "tickets_search"):
        return [{"query": "", **pin}] * n
    if tool == "calendar_list":
        return [dict(pin)] * n
    if tool in BY_ID:
        return over(_ids(ws, *BY_ID[tool]), lambda i: {"id": i})
    pages = [p for p in ws.get("web", {}).get("pages", []) if not p.get("injected")]
    if tool == "web_search":
        return over([p["title"] or p["url"] for p in pages], lambda t: {"query": " ".join(str(t).split()[:3])})
    if tool == "web_fetch":
        return over([p["url"] for p in pages], lambda u: {"url": u})
    if tool in ("records_list", "records_search", "records_get"):
        name = _collection(ws, pin)
        base = {"collection": name, **({"query": ""} if tool == "records_search" else {})}
        if tool != "records_get":
            return [{**base, **pin}] * n
        ids = [r["id"] for r in ws["records"]["collections"][name]["records"]]
        return over(ids, lambda i: {**base, "id": i})
    raise NoOracle(f"{tool}: no read arguments can be derived")


def _literal(value: Any, where: str) -> Any:
    if isinstance(value, str) and GLOB & set(value):
        raise NoOracle(f"{where}: {value!r} is a pattern, not a value to write")
    if isinstance(value, dict):
        return {k: _literal(v, where) for k, v in value.items()}
    if isinstance(value, list):
        return [_literal(v, where) for v in value]
    return value


def _record_write(check: dict[str, Any], ws: dict[str, Any]) -> dict[str, Any]:
    match, fields = _literal(check.get("match", {}), check["id"]), _literal(check.get("fields", {}), check["id"])
    if check["service"] == "records":
        name = check["collection"]
        existing = {r["id"] for r in ws.get("records", {}).get("collections", {}).get(name, {}).get("records", [])}
        if "id" in match and match["id"] in existing:
            return {"tool": "records_update", "args": {"collection": name, "id": match["id"], "fields": fields}}
        return {"tool": "records_create", "args": {"collection": name, "fields": {**match, **fields}}}
    if check["service"] == "tickets" and "id" in match:
        return {"tool": "tickets_update", "args": {"id": match["id"], **fields}}
    raise NoOracle(f"{check['id']}: no tool writes {check['service']} records that way")


def _message(check: dict[str, Any], tool: str) -> list[dict[str, Any]]:
    to = check.get("to")
    if to is None:
        raise NoOracle(f"{check['id']}: no recipient to write to")
    body = check.get("body_contains") or []
    args = {
        "to": _literal(to, check["id"]),
        "subject": str(check.get("subject_contains") or "Follow-up"),
        "body": "\n".join(str(b) for b in ([body] if isinstance(body, str) else body)) or "Please see above.",
    }
    if check.get("cc"):
        args["cc"] = _literal(check["cc"], check["id"])
    return [{"tool": tool, "args": args}] * int(check.get("count") or 1)


def add(plan: Plan, check: dict[str, Any]) -> None:
    """What `check` needs of the oracle, or NoOracle."""
    kind = check["kind"]
    if kind == "tool_called":
        if getattr(TOOLS.find(check["tool"]), "kind", "read") != "read":
            if sum(1 for w in plan.writes if w["tool"] == check["tool"]) < check.get("min", 1):
                raise NoOracle(f"{check['id']}: {check['tool']} calls whose arguments no check states")
            return
        plan.reads += [
            {"tool": check["tool"], "args": a}
            for a in read_args(check["tool"], check.get("args") or {}, plan.ws, check.get("min", 1))
        ]
    elif kind == "record":
        plan.writes.append(_record_write(check, plan.ws))
    elif kind in ("mail_drafted", "mail_sent"):
        plan.writes += _message(check, "mail_draft" if kind == "mail_drafted" else "mail_send")
    elif kind == "event_exists":
        if not all(k in check for k in ("title_contains", "start", "end")):
            raise NoOracle(f"{check['id']}: an event needs a title, a start and an end")
        args = {
            "title": check["title_contains"],
            "start": check["start"],
            "end": check["end"],
            "attendees": check.get("attendees_include", []),
        }
        plan.writes.append({"tool": "calendar_create", "args": args})
    elif kind == "answer_contains":
        plan.parts.append(check["text"] if check.get("text") is not None else check["any_of"][0])
    elif kind == "answer_length":
        plan.min_chars = max(plan.min_chars, check.get("min_chars") or 0)
        plan.min_words = max(plan.min_words, check.get("min_words") or 0)
    elif kind == "answer_number":
        text = f"{check['value']:g}" if isinstance(check["value"], float) else str(check["value"])
        (plan.parts if check.get("label") else plan.first).append(
            f"{check['label']}: {text}" if check.get("label") else text
        )
    elif kind == "answer_json":
        block = json.dumps(check.get("labels") or {}, indent=1)
        plan.parts.append(f"```json\n{block}\n```")
    elif kind == "answer_regex":
        plan.patterns.append((check["id"], check["pattern"]))
    elif kind == "answer_none_of":
        plan.forbidden.append((check["id"], check["phrases"]))
    elif kind == "rubric":
        plan.judged.append(check["id"])
    elif kind == "all_of":
        for member in check["checks"]:
            add(plan, member)
    elif kind in ("any_of", "at_least"):
        _some(plan, check, 1 if kind == "any_of" else check["k"])
    elif kind not in ("tool_not_called", "unchanged"):
        raise NoOracle(f"{check['id']}: {kind} determines no oracle step")


def _some(plan: Plan, check: dict[str, Any], k: int) -> None:
    """Members until k hold; those that need a regex to match come last (a regex gives no text to write)."""
    trials, why = [], []
    for member in check["checks"]:
        trial = Plan(plan.ws)
        try:
            add(trial, member)
        except NoOracle as exc:
            why.append(str(exc))
            continue
        trials.append(trial)
    chosen = sorted(trials, key=lambda t: bool(t.patterns))[
        : 1 if check["kind"] == "any_of" else max(k, sum(not t.patterns for t in trials))
    ]
    if len(chosen) < k:
        raise NoOracle(f"{check['id']}: only {len(chosen)} of the {k} members needed can be derived ({'; '.join(why)})")
    for trial in chosen:
        for key in ("reads", "writes", "first", "parts", "patterns", "forbidden", "judged"):
            getattr(plan, key).extend(getattr(trial, key))
        plan.min_chars, plan.min_words = max(plan.min_chars, trial.min_chars), max(plan.min_words, trial.min_words)


def _answer(plan: Plan) -> str:
    lines = list(dict.fromkeys([*plan.first, *plan.parts]))
    text = "\n".join(lines)
    while len(text) < plan.min_chars or len(text.split()) < plan.min_words:
        text = f"{text}\n{FILLER}".strip()
    for cid, pattern in plan.patterns:
        if regex_problem(pattern) or not regex_search(pattern, text, case_sensitive=False):
            raise NoOracle(
                f"{cid}: the answer the other checks determine does not match /{pattern}/, and a regex gives no example"
            )
    for cid, phrases in plan.forbidden:
        hit = next((p for p in phrases if phrase_find(p, text)), None)
        if hit:
            raise NoOracle(f"{cid}: the answer must say {hit!r} for one check and must not for another")
    return text


def derive_oracle(
    checks: list[dict[str, Any]], ws: dict[str, Any], tools: list[str]
) -> tuple[list[dict[str, Any]], list[str]]:
    """(solution steps, ids of rubric checks the answer is not proven against) or NoOracle."""
    plan = Plan(ws)
    for check in sorted(checks, key=lambda c: c["kind"] == "tool_called"):  # writes first: `tool_called` may count them
        add(plan, check)
    steps = [*plan.reads, *plan.writes]
    missing = sorted({s["tool"] for s in steps} - set(tools))
    if missing:
        raise NoOracle(f"the oracle needs {missing}, which the task does not offer")
    answer = _answer(plan)
    if not answer and plan.judged:  # nothing to say but "Done.", which proves nothing a judge is asked about
        raise NoOracle(f"every answer criterion is judged ({', '.join(plan.judged)}): no answer can be derived")
    return [*steps, {"answer": answer or "Done."}], plan.judged


def _how_many(tool: str, pin: dict[str, Any], ws: dict[str, Any]) -> int:
    """How many distinct reads a tool has in the workspace (a search or a listing: one)."""
    if tool in BY_ID:
        return len(_ids(ws, *BY_ID[tool]))
    if tool == "web_fetch":
        return len([p for p in ws.get("web", {}).get("pages", []) if not p.get("injected")])
    if tool == "records_get":
        return len(ws["records"]["collections"][pin["collection"]]["records"])
    return 1


def thorough_reads(ws: dict[str, Any], tools: list[str]) -> list[dict[str, Any]]:
    """Every record the offered read tools reach, each read once (a search or a listing once per tool, or per
    collection): what a careful person does before answering, and what a benchmark grader that counts reads or
    requires a particular one asks for. Tools with nothing to read are left out."""
    collections = list(ws.get("records", {}).get("collections", {}))
    steps: list[dict[str, Any]] = []
    for tool in tools:
        if TOOLS.get(tool).kind != "read":
            continue
        for pin in [{"collection": c} for c in collections] if tool.startswith("records_") else [{}]:
            n = _how_many(tool, pin, ws)
            try:
                found = read_args(tool, pin, ws, n) if n else []
            except NoOracle:
                continue
            steps += [{"tool": tool, "args": args} for args in found]
    return steps
