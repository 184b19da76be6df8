"""What a check kind is: one registry entry (`CheckKind`) holding its model — the JSON contract of the check —,
its evaluator — a pure function of the evidence —, the references it makes, and what the repairers need.

Every kind lives in one module of `coworkenv/checks/kinds/` and registers itself with `register_kind`; the grader,
the validation battery and the repairers iterate over `CHECKS` and never name a kind. docs/architecture.md ("How to
add …", "a check kind") walks through one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from coworkenv.caps import CAPS
from coworkenv.frozen import EMPTY_LIST
from coworkenv.registry import Registry
from coworkenv.workspace.audit import AuditEntry

Outcome = tuple[bool | None, str]
"""(passed, reason): the reason says what was found, for people reading a grade. `passed` None means "not graded"
(e.g. a rubric without a judge): it counts as not passed, and the grade lists it."""


class Credited(tuple):
    """An outcome with partial credit: it unpacks as any `Outcome`, (passed, reason), and `credit` in [0, 1] is the
    share of the check's weight it earns (a `code` check's graded score; docs/design/contracts.md, "Scoring")."""

    credit: float

    def __new__(cls, passed: bool | None, reason: str, credit: float) -> Credited:
        made = super().__new__(cls, (passed, reason))
        made.credit = min(1.0, max(0.0, float(credit)))
        return made


DROP = object()
"""A repair hook's answer meaning "this check cannot be kept; drop it"."""


class JudgeVerdict(Protocol):
    passed: bool | None
    """None: not graded (the judge gave no usable reply)."""
    reason: str


class Judge(Protocol):
    """What a check that needs judgement asks (`coworkenv.judge.endpoint.Judge`, or the sandbox's table of verdicts asked
    for beforehand): whether a text meets written criteria."""

    def verdict(self, criteria: str, text: str) -> JudgeVerdict: ...


class Evidence(Protocol):
    """What a check may look at (`coworkenv.episode.Evidence` provides it): states before and after, the audit log,
    the final answer, the messages to the simulated user, the text of every assistant message (`texts`), and the
    judge its episode was graded with (None: none, so rubric checks are not graded)."""

    initial_state: dict[str, Any]
    final_state: dict[str, Any]
    calls: tuple[AuditEntry, ...]
    answer: str
    says: tuple[str, ...]
    texts: tuple[str, ...]
    judge: Judge | None


def _empty(value: Any) -> bool:
    return not value


class CheckBase(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    id: str = Field(min_length=1)
    weight: float = Field(default=1.0, gt=0)
    # Left out of the JSON when empty: specs written before `requires` existed keep their JSON, and so their hashes.
    requires: list[Annotated[str, Field(min_length=1)]] = Field(
        default=EMPTY_LIST, max_length=CAPS.checks, exclude_if=_empty
    )
    """Ids of other top-level checks that must pass for this one to earn credit (its prerequisites: no credit unless they all pass)."""


def exactly_one(model: BaseModel, *names: str) -> None:
    given = [n for n in names if getattr(model, n) is not None]
    if len(given) != 1:
        raise ValueError(f"give exactly one of {', '.join(names)}")


def outcome(passed: bool, yes: str, no: str) -> Outcome:
    return (True, yes) if passed else (False, no)


@dataclass
class References:
    """What the battery's `references` check knows when it asks a check for the things it refers to."""

    tools: frozenset[str]
    """The tools the task allows."""
    states: list[dict[str, Any]]
    """The initial workspace state, and the oracle's final state when the oracle ran."""
    named_paths: frozenset[str]
    """Paths the oracle's tool steps name (a file the solution creates)."""
    found: list[tuple[Any, str, str]] = field(default_factory=list)
    """(ref, problem, where suffix such as `.args`)."""

    def miss(self, ref: Any, problem: str, at: str = "") -> None:
        self.found.append((ref, problem, at))

    def in_any_state(self, test: Callable[[dict[str, Any]], bool]) -> bool:
        return any(test(s) for s in self.states)


@dataclass
class Fixing:
    """What a check's `fix_reference` hook may use to repair a reference the battery found missing."""

    spec: dict[str, Any]
    """The spec being repaired (plain JSON data; the hook may add to its `tools`)."""
    states: Callable[[], list[dict[str, Any]]]
    """The initial state and the (fault-free) oracle's final state; runs the oracle on first use."""
    notes: list[str] = field(default_factory=list)

    def note(self, text: str) -> None:
        self.notes.append(text)


def unfixable(entry: dict[str, Any]) -> str:
    """Why a check with this missing reference is dropped when nothing can fix it."""
    return str(entry.get("problem") or "") or "its target exists nowhere"


Evaluate = Callable[[Any, Evidence], Outcome]
Recompute = Callable[[dict[str, Any], Evidence, Any], Any]
Strengthen = Callable[[dict[str, Any], Evidence], dict[str, Any] | None]
FixReference = Callable[[dict[str, Any], dict[str, Any], Fixing], str | None]
Leaks = Callable[[Any, str, Callable[[], str]], list[dict[str, Any]]]


@dataclass(frozen=True)
class CheckKind:
    name: str
    model: type[CheckBase]
    evaluate: Evaluate
    references: Callable[[Any, References], None] | None = None
    """Report, through `References.miss`, every target the check names that exists nowhere."""
    recompute: Recompute | None = None
    """(check dict, a trusted oracle's evidence, the task) → the check with its expectation taken from that evidence;
    `DROP` when the oracle never produces its target (or must break it), None when it cannot be recomputed. Absent:
    the check is dropped."""
    strengthen: Strengthen | None = None
    """(check dict, the oracle's evidence) → a stricter check that only the solution's effect satisfies, or None."""
    fix_reference: FixReference | None = None
    """(check dict, the battery's missing-reference entry, Fixing) → None once fixed in place, else why to drop it.
    Absent: a check whose target exists nowhere is dropped."""
    leaks: Leaks | None = None
    """(check, instruction, workspace text) → what of the expected answer the instruction gives away."""
    guard: bool = False
    """Holds on an untouched workspace by design: it penalizes collateral damage (`unchanged`, `tool_not_called`)."""
    answer: bool = False
    """Reads only the final answer: holding on an untouched run says nothing about the workspace."""
    evidence_for: frozenset[str] = frozenset()
    """Capabilities this kind of check is evidence of (e.g. `asked_user` → multi_turn), for `capabilities_consistent`."""
    group: bool = False
    """Holds nested checks in `checks` (`coworkenv/checks/groups.py`): its flags are its members' (`is_guard`, …)."""


CHECKS: Registry[CheckKind] = Registry("check kind")


def register_kind(kind: CheckKind) -> CheckKind:
    declared = kind.model.model_fields["kind"].annotation.__args__[0]
    if declared != kind.name:
        raise ValueError(f"check kind {kind.name!r}: its model declares kind {declared!r}")
    CHECKS.add(kind.name, kind)
    return kind
