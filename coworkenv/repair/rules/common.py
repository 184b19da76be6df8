"""Shared by the repairers: the registry, the context, running a spec, which checks discriminate."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from pydantic import TypeAdapter, ValidationError

from coworkenv.checks import CHECKS, Check, CheckKind, evaluate, is_guard
from coworkenv.episode.evidence import Evidence
from coworkenv.grading.play import Run, play, play_answer_only
from coworkenv.registry import Registry
from coworkenv.spec.task import TaskSpec
from coworkenv.spec.verdict import CheckOutcome, TaskValidation
from coworkenv.workspace.audit import AuditEntry

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

SCHEMA_FIELDS = frozenset(TaskSpec.model_fields)
_CHECK = TypeAdapter(Check)


# --- running a spec ----------------------------------------------------------------------------------------


def parse(spec: Any) -> TaskSpec | None:
    if not isinstance(spec, dict):
        return None
    try:
        return TaskSpec.model_validate(spec)
    except (ValidationError, ValueError, TypeError):
        return None


def spec_or_note(spec_dict: Spec, ctx: RepairContext) -> TaskSpec | None:
    """The spec parsed, or None with a note: every repairer but the schema's needs a spec that parses."""
    spec = parse(spec_dict)
    if spec is None:
        ctx.note("the spec does not parse as a TaskSpec; fix the schema first")
    return spec


def fault_free(spec: TaskSpec) -> TaskSpec:
    if spec.faults.rate == 0.0:
        return spec
    data = spec.model_dump(mode="json", by_alias=True)
    data["faults"] = {**data["faults"], "rate": 0.0}
    return TaskSpec.model_validate(data)


def oracle_run(spec: TaskSpec) -> Run:
    """The oracle on a fault-free copy: what the task's solution does when every call goes through. Its final state
    is ground truth only when it is *trusted*: none of its own calls failed (`Run.tool_errors` is empty)."""
    return play(fault_free(spec))


def untouched_run(spec: TaskSpec) -> Run:
    """No tool call, only the answer "Done.": what the answer-only battery check plays."""
    return play_answer_only(spec)


def holds(check: dict[str, Any], evidence: Evidence) -> bool:
    try:
        return evaluate(_CHECK.validate_python(check), evidence)[0] is True  # not graded does not hold
    except (ValidationError, ValueError, TypeError, KeyError):
        return False


def kind_of(check: dict[str, Any]) -> CheckKind | None:
    """The registry entry of a check given as plain data (None for an unknown kind: the spec may not parse)."""
    kind = check.get("kind")
    return CHECKS.find(kind)


def is_guard_kind(check: dict[str, Any]) -> bool:
    """A kind that holds on an untouched workspace by design (`unchanged`, `tool_not_called`), or a group of them."""
    return is_guard(check)


def describe_errors(errors: Iterable[AuditEntry], limit: int = 3) -> str:
    items = [f"{e.tool} → {e.code} {e.error}" for e in errors]
    more = f" (and {len(items) - limit} more)" if len(items) > limit else ""
    return "; ".join(items[:limit]) + more


def changed(original: Spec, patched: Spec) -> Spec | None:
    """The patched spec, or None when the repair changed nothing."""
    return None if patched == original else patched


# --- checks: what discriminates, what may be dropped ------------------------------------------------------------


def discriminating(checks: list[dict[str, Any]], untouched: Evidence) -> list[int]:
    """Indices of the checks that the untouched workspace fails."""
    return [i for i, ch in enumerate(checks) if not holds(ch, untouched)]


def drop_checks(spec: Spec, drop: set[int], untouched: Evidence, ctx: RepairContext, why: str) -> bool:
    """Drop these checks if another discriminating check remains; True if dropped."""
    if not drop:
        return False
    keep = [ch for i, ch in enumerate(spec["checks"]) if i not in drop]
    ids = ", ".join(str(spec["checks"][i].get("id")) for i in sorted(drop))
    if not keep or not discriminating(keep, untouched):
        ctx.note(f"cannot drop check(s) {ids}: no discriminating check would remain")
        return False
    ctx.note(f"dropped check(s) {ids}: {why}")
    gone = {spec["checks"][i].get("id") for i in drop}
    for ch in keep:
        # a check that required a dropped one keeps its own condition (its ids must still exist)
        if isinstance(ch, dict) and any(r in gone for r in ch.get("requires") or []):
            ch["requires"] = [r for r in ch["requires"] if r not in gone]
            if not ch["requires"]:
                del ch["requires"]
    spec["checks"] = keep
    return True
