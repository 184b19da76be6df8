"""Shared by the repairers: the registry, the context, running a spec, which checks discriminate."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from pydantic import TypeAdapter, ValidationError

from coworkenv.agents.registry import make_policy
from coworkenv.episode.evidence import Evidence
from coworkenv.episode.runner import run_episode
from coworkenv.grading.checks import evaluate
from coworkenv.grading.score import Grade, grade
from coworkenv.registry import Registry
from coworkenv.spec.checks import Check
from coworkenv.spec.task import AnswerStep, TaskSpec
from coworkenv.validate.verdict import CheckOutcome, TaskValidation
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

def _close(name: Any, known: Iterable[str], cutoff: float = 0.85) -> str | None:
    """The closest known name to a misspelled one, if it is close (difflib ratio ≥ cutoff)."""
    if not isinstance(name, str):
        return None
    close = difflib.get_close_matches(name, list(known), n=1, cutoff=cutoff)
    return close[0] if close else None
