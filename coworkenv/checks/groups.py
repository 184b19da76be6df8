"""Group checks (`all_of`, `any_of`, `at_least`): a check made of nested checks, and the helpers that see through them.

A group delegates every hook to its members' kinds, so the grader, the battery and the repairers keep calling the
per-kind hooks of the top-level checks. Code that needs every leaf walks them with `walk`. Members' weights are
ignored (the group counts with its own) and members carry no `requires` (it names top-level checks).

A member that is not graded (`evaluate` → `(None, reason)`) leaves the group not graded unless the graded members
already decide it: `any_of` with one graded pass passes, `all_of` with one graded failure fails, `at_least` passes
once k members pass and fails once fewer than k can.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, Self

from pydantic import Field, ValidationError, model_validator
from pydantic_core import PydanticCustomError

from coworkenv.caps import CAPS
from coworkenv.checks.base import (
    CHECKS,
    DROP,
    CheckBase,
    CheckKind,
    Evidence,
    Fixing,
    Outcome,
    References,
    register_kind,
)

if TYPE_CHECKING:
    from coworkenv.checks import Check

Result = tuple[str, bool | None, str]
"""(member id, passed or None when not graded, reason)."""
Rule = Callable[[Any, list[Result]], Outcome]


class GroupBase(CheckBase):
    """`checks`: the members, any check kind (groups included). `Check` is resolved once every kind has registered
    (`coworkenv/checks/__init__.py` rebuilds the group models)."""

    checks: list[Check] = Field(min_length=1, max_length=CAPS.checks)

    @model_validator(mode="after")
    def _members(self) -> Self:
        for i, member in enumerate(self.checks):
            if member.requires:
                raise ValueError(
                    f"checks.{i} ({member.id}): `requires` names top-level checks; put it on the group {self.id!r}"
                )
        if depth(self) > CAPS.check_depth:
            context = {"id": self.id, "cap": CAPS.check_depth}
            raise PydanticCustomError(
                "too_deep", "group {id}: groups nested deeper than {cap} levels (cap check_depth)", context
            )
        return self


# --- seeing through groups ----------------------------------------------------------------------------------


def _kind(check: Any) -> CheckKind | None:
    name = check.get("kind") if isinstance(check, dict) else getattr(check, "kind", None)
    return CHECKS.find(name) if isinstance(name, str) else None


def members(check: Any) -> list[Any]:
    """The nested checks of a group (a model or plain data); [] for any other check."""
    kind = _kind(check)
    if kind is None or not kind.group:
        return []
    nested = check.get("checks") if isinstance(check, dict) else check.checks
    return list(nested) if isinstance(nested, list) else []


def walk(checks: Iterable[Any]) -> Iterator[Any]:
    """Every check, each group followed by its members, nested ones included (models or plain data)."""
    for check in checks:
        yield check
        yield from walk(members(check))


def depth(check: Any) -> int:
    """Group levels: 0 for a plain check, 1 for a group of plain checks, …"""
    kind = _kind(check)
    if kind is None or not kind.group:
        return 0
    return 1 + max((depth(m) for m in members(check)), default=0)


def _all(check: Any, flag: str) -> bool:
    kind = _kind(check)
    if kind is None:
        return False
    if kind.group:
        nested = members(check)
        return bool(nested) and all(_all(m, flag) for m in nested)
    return bool(getattr(kind, flag))


def is_guard(check: Any) -> bool:
    """Holds on an untouched workspace by design: a guard kind, or a group whose members all are guards."""
    return _all(check, "guard")


def is_answer(check: Any) -> bool:
    """Reads only the final answer: an answer kind, or a group whose members all are answer checks."""
    return _all(check, "answer")


def evidence_of(checks: Iterable[Any]) -> set[str]:
    """The capabilities these checks, nested ones included, are evidence of."""
    return {cap for c in walk(checks) if (kind := _kind(c)) is not None for cap in kind.evidence_for}


# --- evaluation ---------------------------------------------------------------------------------------------


def listed(results: Iterable[Result]) -> str:
    return "; ".join(f"{cid}: {reason}" for cid, _, reason in results)


def evaluate_group(rule: Rule) -> Callable[[Any, Evidence], Outcome]:
    def evaluate(check: Any, ev: Evidence) -> Outcome:
        results = [(m.id, *CHECKS.get(m.kind).evaluate(m, ev)) for m in check.checks]
        return rule(check, results)

    return evaluate


def _holds(check: dict[str, Any], ev: Evidence) -> bool:
    kind = _kind(check)
    if kind is None:
        return False
    try:
        return kind.evaluate(kind.model.model_validate(check), ev)[0] is True
    except (ValidationError, ValueError, TypeError, KeyError):
        return False


def _min_members(check: dict[str, Any]) -> int:
    kind = _kind(check)
    return int(check.get("k", 1)) if kind is not None and "k" in kind.model.model_fields else 1


# --- repair and battery hooks, delegated to the members ----------------------------------------------------


def references(check: Any, refs: References) -> None:
    for i, member in enumerate(check.checks):
        hook = CHECKS.get(member.kind).references
        if hook is None:
            continue
        inner = References(tools=refs.tools, states=refs.states, named_paths=refs.named_paths)
        hook(member, inner)
        for ref, problem, at in inner.found:
            refs.miss(ref, problem, f".checks[{i}]{at}")


def leaks(check: Any, instruction: str, workspace_text: Callable[[], str]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for member in check.checks:
        hook = CHECKS.get(member.kind).leaks
        if hook is not None:
            found += hook(member, instruction, workspace_text)
    return found


def recompute(check: dict[str, Any], ev: Evidence, spec: Any) -> Any:
    """Members the oracle fails recomputed through their kinds; members it never produces dropped while the group
    keeps enough of them (else the group is dropped); None when a member cannot be recomputed."""
    kept = []
    for member in check["checks"]:
        if _holds(member, ev):
            kept.append(member)
            continue
        kind = _kind(member)
        fixed = DROP if kind is None or kind.recompute is None else kind.recompute(member, ev, spec)
        if fixed is None:
            return None
        if fixed is not DROP:
            kept.append(fixed)
    return {**check, "checks": kept} if len(kept) >= _min_members(check) else DROP


def strengthen(check: dict[str, Any], oracle: Evidence) -> dict[str, Any] | None:
    """Every member its kind can strengthen, strengthened; None when none can."""
    new, changed = [], False
    for member in check["checks"]:
        kind = _kind(member)
        stronger = kind.strengthen(member, oracle) if kind is not None and kind.strengthen is not None else None
        changed |= stronger is not None and stronger != member
        new.append(stronger if stronger is not None else member)
    return {**check, "checks": new} if changed else None


_MEMBER = re.compile(r"^checks\[\d+\]\.checks\[(\d+)\](.*)$")


def fix_reference(check: dict[str, Any], entry: dict[str, Any], fixing: Fixing) -> str | None:
    """The member the entry points to (`checks[i].checks[j]…`) fixed by its kind's hook; a member that cannot be
    fixed is removed while the group keeps enough members, else the whole group goes."""
    match = _MEMBER.match(str(entry.get("where", "")))
    nested = check.get("checks")
    if match is None or not isinstance(nested, list) or int(match.group(1)) >= len(nested):
        return str(entry.get("problem") or "") or "its target exists nowhere"
    j = int(match.group(1))
    member = nested[j]
    kind = _kind(member)
    inner = {**entry, "where": f"checks[{j}]{match.group(2)}"}
    if kind is None or kind.fix_reference is None:
        reason: str | None = str(entry.get("problem") or "") or "its target exists nowhere"
    else:
        reason = kind.fix_reference(member, inner, fixing)
    if reason is None:
        return None
    if len(nested) - 1 < max(1, _min_members(check)):
        return f"member {member.get('id')}: {reason}"
    del nested[j]
    fixing.note(f"check {check.get('id')}: member {member.get('id')} removed ({reason})")
    return None


def register_group(name: str, model: type[GroupBase], rule: Rule) -> CheckKind:
    return register_kind(
        CheckKind(
            name=name,
            model=model,
            evaluate=evaluate_group(rule),
            references=references,
            recompute=recompute,
            strengthen=strengthen,
            fix_reference=fix_reference,
            leaks=leaks,
            group=True,
        )
    )
