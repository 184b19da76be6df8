"""Claw-Eval grading → CoworkEnv checks and prohibited rules, one criterion at a time, each with a status:
`exact` (same meaning), `approximate` (close, with the difference named), `rubric` (judge-scored there and here) or
`unexpressible` (with the reason). The mapping table is docs/design/evaluation.md, "Importing Claw-Eval tasks"."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, get_args

from coworkenv.checks import CHECKS
from coworkenv.checks.base import CheckBase
from coworkenv.importers.claw_eval.report import Status
from coworkenv.importers.claw_eval.tool_map import RECORD_SERVICES, map_tool
from coworkenv.importers.claw_eval.workspace import SHAPES

STATUSES: tuple[str, ...] = get_args(Status)
"""Best first: the one place they are listed is the report's `Status`."""
GROUPS = {"all_of", "any_of", "at_least"}
TEXT_OUT = ("marker_not_in_output", "credential_exposure", "text_not_in_output")
"""Safety checks on what the agent writes: a check here (a prohibited rule matches calls only)."""


class Unexpressible(Exception):
    """A criterion with no CoworkEnv counterpart; the message says why."""


@dataclass
class Criterion:
    source: str
    type: str
    status: str
    weight: float | None = None
    target: str = ""
    reason: str = ""


@dataclass
class Mapped:
    checks: list[dict[str, Any]] = field(default_factory=list)
    prohibited: list[dict[str, Any]] = field(default_factory=list)
    criteria: list[Criterion] = field(default_factory=list)


def has(kind: str, option: str | None = None) -> bool:
    """Whether this build has the check kind (and the option): the mapping adapts to the kinds registered."""
    if kind not in CHECKS:
        return False
    return option is None or option in CHECKS.get(kind).model.model_fields


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", str(text).lower()).strip("-") or "check"


class Context:
    def __init__(self, data: dict[str, Any], constants: dict[str, Any], collections: list[str]):
        self.data, self.constants, self.collections = data, constants, collections
        self.ids: set[str] = set()
        self.notes: list[str] = []

    def new_id(self, name: str) -> str:
        base = slug(name)
        cid, n = base, 2
        while cid in self.ids:
            cid, n = f"{base}-{n}", n + 1
        self.ids.add(cid)
        return cid

    def tool(self, name: Any) -> tuple[str, dict[str, Any]]:
        mapped = map_tool(str(name), self.collections) if name else None
        if mapped is None:
            raise Unexpressible(f"tool {name!r} has no CoworkEnv counterpart")
        return mapped


def _texts(spec: dict[str, Any], key: str) -> list[str]:
    values = spec.get(key)
    if not isinstance(values, list) or not values:
        raise Unexpressible(f"`{key}` must be a non-empty list")
    return [str(v) for v in values]


def _every(ctx: Context, cid: str, checks: list[dict[str, Any]]) -> tuple[dict[str, Any], str]:
    """One check, or `all_of` of several; without `all_of`, the members split the weight (partial credit)."""
    if len(checks) == 1:
        return {**checks[0], "id": cid}, "exact"
    members = [{**c, "id": ctx.new_id(f"{cid}-{i + 1}")} for i, c in enumerate(checks)]
    if has("all_of"):
        return {"id": cid, "kind": "all_of", "checks": members}, "exact"
    return {"id": cid, "kind": "_split", "checks": members}, "approximate"


def _contains(texts: list[str], whole_word: bool) -> list[dict[str, Any]]:
    extra = {"whole_word": True} if whole_word and has("answer_contains", "whole_word") else {}
    return [{"kind": "answer_contains", "text": t, **extra} for t in texts]


def _record_target(ctx: Context, spec: dict[str, Any]) -> tuple[str, str]:
    service, collection = str(spec.get("service", "")), str(spec.get("collection", ""))
    if service in RECORD_SERVICES or f"{service}.{collection}" in ctx.collections:
        if f"{service}.{collection}" not in ctx.collections:
            raise Unexpressible(f"no fixture collection {service}.{collection}")
        return "records", f"{service}.{collection}"
    if service in SHAPES and has("record"):
        from coworkenv.workspace.service import SERVICES

        ours = SHAPES[service][0]
        return ours, SERVICES.get(ours).collection
    raise Unexpressible(f"state of service {service!r} cannot be checked")


def _need(kind: str) -> None:
    if not has(kind):
        raise Unexpressible(f"check kind {kind!r} is not available in this build")


def _one(ctx: Context, cid: str, spec: dict[str, Any], judge: str) -> tuple[dict[str, Any], str]:
    """(check, status) for one Claw-Eval check spec, or Unexpressible."""
    kind = str(spec.get("type", ""))
    if kind == "tool_called":
        tool, pin = ctx.tool(spec.get("tool_name"))
        check = {"id": cid, "kind": "tool_called", "tool": tool, "min": int(spec.get("min_calls") or 1)}
        return ({**check, "args": pin} if pin else check), "exact"
    if kind in ("keywords_present", "categories_present"):
        _need("answer_contains")
        key = "keywords" if kind == "keywords_present" else "categories"
        return _every(ctx, cid, _contains(_texts(spec, key), whole_word=kind == "categories_present"))
    if kind in ("patterns_present", "regex_match"):
        _need("answer_regex")
        return _every(ctx, cid, [{"kind": "answer_regex", "pattern": p} for p in _texts(spec, "patterns")])
    if kind == "min_length":
        _need("answer_length")
        if spec.get("field", "final_text") != "final_text":
            raise Unexpressible(f"min_length of {spec.get('field')!r}: only the final text is read here")
        return {"id": cid, "kind": "answer_length", "min_chars": int(spec.get("min_length") or 1)}, "exact"
    if kind == "number_present":
        _need("answer_number")
        check = {"id": cid, "kind": "answer_number", "value": spec.get("value"), "tol": spec.get("tol", 1e-6)}
        if spec.get("label") is not None and has("answer_number", "label"):
            check["label"] = str(spec["label"])
        return check, "exact"
    if kind == "labels_match":
        return _labels(ctx, cid, spec)
    if kind == "state":
        service, collection = _record_target(ctx, spec)
        _need("record")
        return {
            "id": cid,
            "kind": "record",
            "service": service,
            "collection": collection,
            "match": spec.get("match") or {},
            "fields": spec.get("fields") or {},
        }, "exact"
    if kind in ("draft_saved", "email_sent"):
        ours = "mail_drafted" if kind == "draft_saved" else "mail_sent"
        _need(ours)
        keys = ("to", "cc", "subject_contains", "body_contains", "count")
        return {"id": cid, "kind": ours, **{k: spec[k] for k in keys if k in spec}}, "exact"
    if kind == "event_created":
        _need("event_exists")
        keys = ("title_contains", "start", "end", "attendees_include")
        return {"id": cid, "kind": "event_exists", **{k: spec[k] for k in keys if k in spec}}, "exact"
    if kind == "llm_judge":
        _need("rubric")
        criteria = "\n\n".join(str(t) for t in (spec.get("rubric") or spec.get("description"), judge) if t)
        if not criteria:
            raise Unexpressible("llm_judge without a rubric or description")
        return {"id": cid, "kind": "rubric", "criteria": criteria}, "rubric"
    if kind in GROUPS:
        return _group(ctx, cid, kind, spec, judge)
    raise Unexpressible(f"check type {kind!r} has no CoworkEnv counterpart" if kind else "a check without `type`")


def _labels(ctx: Context, cid: str, spec: dict[str, Any]) -> tuple[dict[str, Any], str]:
    _need("answer_json")
    source = spec.get("labels_from")
    raw = ctx.constants.get(str(source)) if source else spec.get("labels")
    if not isinstance(raw, dict) or not raw:
        raise Unexpressible(f"no labels: grader.py has no literal {source}" if source else "`labels` must be a mapping")
    labels, ambiguous = {}, []
    for item, value in raw.items():
        options = value.get("expected") if isinstance(value, dict) else value
        options = [options] if isinstance(options, str) else options
        if isinstance(options, list) and len(options) == 1:
            labels[str(item)] = str(options[0])
        else:
            ambiguous.append(str(item))
    if not labels:
        raise Unexpressible("every item accepts several labels")
    check = {
        "id": cid,
        "kind": "answer_json",
        "labels": labels,
        **{k: spec[k] for k in ("id_field", "label_field", "min_share") if k in spec},
    }
    if ambiguous:
        ctx.notes.append(f"{cid}: items {ambiguous} accept several labels; answer_json takes one, so they are left out")
        return check, "approximate"
    return check, "exact"


def _group(ctx: Context, cid: str, kind: str, spec: dict[str, Any], judge: str) -> tuple[dict[str, Any], str]:
    _need(kind)
    members, statuses = [], []
    raw = spec.get("checks")
    if not isinstance(raw, list) or not raw:
        raise Unexpressible(f"{kind} needs a non-empty `checks` list")
    for i, item in enumerate(raw):
        if not isinstance(item, dict):
            raise Unexpressible(f"{kind} member {i} is not a mapping")
        inner = item.get("check", item)
        member, status = _one(ctx, ctx.new_id(item.get("name") or f"{cid}-{i + 1}"), inner, judge)
        if member["kind"] == "_split":
            raise Unexpressible(f"{kind} member {i}: `all_of` is not available")
        members.append(member)
        statuses.append(status)
    check = {"id": cid, "kind": kind, "checks": members}
    if kind == "at_least":
        check["k"] = int(spec.get("k") or 1)
    order = {s: i for i, s in enumerate(STATUSES)}
    return check, max(statuses, key=order.__getitem__)


def _describe(check: dict[str, Any]) -> str:
    if check["kind"] in GROUPS or check["kind"] == "_split":
        inner = ", ".join(_describe(c) for c in check["checks"])
        k = f"{check['k']} of " if "k" in check else ""
        return f"{check['kind'] if check['kind'] != '_split' else 'split'}[{k}{inner}]"
    return check["kind"]


def _flatten_split(check: dict[str, Any], weight: float) -> list[dict[str, Any]]:
    if check["kind"] != "_split":
        return [{**check, "weight": weight}]
    share = weight / len(check["checks"])
    return [{**c, "weight": share} for c in check["checks"]]


def map_scoring(ctx: Context, mapped: Mapped) -> None:
    judge = str(ctx.data.get("judge_rubric") or "")
    names: dict[str, str] = {}
    pending_requires: list[tuple[dict[str, Any], list[Any], Criterion]] = []
    for i, component in enumerate(ctx.data.get("scoring_components") or []):
        name = (
            str(component.get("name") or f"criterion-{i + 1}") if isinstance(component, dict) else f"criterion-{i + 1}"
        )
        spec = component.get("check") if isinstance(component, dict) else None
        ctype = str(spec.get("type", "")) if isinstance(spec, dict) else ""
        weight = component.get("weight") if isinstance(component, dict) else None
        crit = Criterion(source=f"scoring:{name}", type=ctype, status="unexpressible", weight=weight)
        mapped.criteria.append(crit)
        try:
            if not isinstance(spec, dict):
                raise Unexpressible("no `check` mapping")
            if not isinstance(weight, int | float) or isinstance(weight, bool) or not weight > 0:
                raise Unexpressible(f"weight {weight!r} is not a positive number")
            check, crit.status = _one(ctx, ctx.new_id(name), spec, judge)
        except (Unexpressible, TypeError, ValueError) as exc:
            crit.reason = str(exc)
            continue
        crit.target = _describe(check)
        made = _flatten_split(check, float(weight))
        if crit.status == "approximate" and check["kind"] == "_split":
            crit.reason = "all of the texts: `all_of` is not available, so each text earns its share of the weight"
        names[name] = made[0]["id"]
        mapped.checks += made
        if component.get("requires"):
            pending_requires.append((made[0], list(component["requires"]), crit))
    for check, required, crit in pending_requires:
        ids = [names[str(r)] for r in required if str(r) in names]
        missing = [str(r) for r in required if str(r) not in names]
        if "requires" not in CheckBase.model_fields:
            crit.status, crit.reason = "approximate", "`requires` is not available: credit is not gated"
            continue
        check["requires"] = ids
        if missing:
            crit.status, crit.reason = "approximate", f"gated on {missing}, which did not map: that gate is dropped"


def _pin(tool: str, pin: dict[str, Any], field_name: str, value: Any) -> dict[str, Any]:
    if tool in ("records_create", "records_update"):
        return {**pin, "fields": {field_name: value}}
    return {**pin, field_name: value}


def map_safety(ctx: Context, mapped: Mapped) -> None:
    gated: list[str] = []
    for i, rule in enumerate(ctx.data.get("safety_checks") or []):
        rule = rule if isinstance(rule, dict) else {}
        kind = str(rule.get("type", ""))
        reason = str(rule.get("description") or kind)
        crit = Criterion(source=f"safety:{i + 1}", type=kind, status="unexpressible")
        mapped.criteria.append(crit)
        try:
            if kind == "tool_not_called":
                tool, pin = ctx.tool(rule.get("tool_name"))
                mapped.prohibited.append({"tool": tool, **({"args": pin} if pin else {}), "reason": reason})
            elif kind == "tool_not_called_with":
                tool, pin = ctx.tool(rule.get("tool_name"))
                if not rule.get("field"):
                    raise Unexpressible("tool_not_called_with without `field`")
                args = _pin(tool, pin, str(rule["field"]), rule.get("value"))
                mapped.prohibited.append({"tool": tool, "args": args, "reason": reason})
            elif kind in ("tool_call_recipient_check", "wrong_recipients") and rule.get("blocked"):
                tool, pin = ctx.tool(rule.get("tool_name"))
                key = str(rule.get("field") or "to")
                mapped.prohibited += [
                    {"tool": tool, "args": {**pin, key: str(b)}, "reason": reason} for b in _texts(rule, "blocked")
                ]
            elif kind in TEXT_OUT and (rule.get("patterns") or rule.get("markers")):
                _need("answer_none_of")
                phrases = _texts(rule, "patterns" if rule.get("patterns") else "markers")
                cid = ctx.new_id(f"safety-{kind}")
                extra = {"scope": "messages"} if has("answer_none_of", "scope") else {}
                weights = [c["weight"] for c in mapped.checks] or [1.0]
                mapped.checks.append(
                    {"id": cid, "kind": "answer_none_of", "phrases": phrases, "weight": min(weights), **extra}
                )
                gated.append(cid)
                crit.status, crit.target = "approximate", "answer_none_of"
                crit.reason = "a check on the agent's messages, not a safety zero: " + (
                    "every other check requires it"
                    if "requires" in CheckBase.model_fields
                    else "it earns its weight only"
                )
                continue
            else:
                raise Unexpressible(f"safety check {kind!r} is judged by grader code: {reason}")
        except Unexpressible as exc:
            crit.reason = str(exc)
            continue
        crit.status, crit.target = "exact", "prohibited"
    if gated and "requires" in CheckBase.model_fields:
        for check in mapped.checks:
            if check["id"] not in gated:
                check["requires"] = [*check.get("requires", []), *gated]


def map_criteria(data: dict[str, Any], constants: dict[str, Any], collections: list[str]) -> tuple[Mapped, list[str]]:
    ctx = Context(data, constants, collections)
    mapped = Mapped()
    map_scoring(ctx, mapped)
    map_safety(ctx, mapped)
    return mapped, ctx.notes
