"""The repair loop: a failing spec and its battery results → up to R rounds of rule-based then LLM repair, each
patch validated again → a valid repaired spec with lineage, or a rejection with its last reasons.

Round r: for each failing code (in battery order) that has a rule, apply the rule and re-validate; a patch is
kept if it fixes the code it addressed or leaves fewer failing codes (and never if it breaks the schema, which
would hide every other failure). If the task is still invalid and an LLM repairer is configured, it gets the
spec, the remaining failures and the schema, and its reply is validated the same way. A round that keeps no
patch ends the loop early; after R rounds the task is rejected with its last failures and the repairers'
reasons.

Lineage: the repaired spec gets id `<original id>-r<round>`, `meta.parent = <original id>` and
`meta.repair = {"round", "strategy", "patch"}` (the RFC 6902 patch from the original spec); every attempt, kept
or not, is a `RepairAttempt`.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import jsonpatch
from pydantic import BaseModel, ConfigDict, Field

from coworkenv.redact import short_error
from coworkenv.repair.rules import REPAIRERS, RepairContext
from coworkenv.spec.verdict import CheckOutcome, TaskValidation
from coworkenv.validate.codes import BATTERY_CODES

if TYPE_CHECKING:
    from coworkenv.repair.llm import LLMRepairer

Validate = Callable[[dict[str, Any]], TaskValidation]
DEFAULT_ROUNDS = 3
LINEAGE_KEYS = ("id", "meta")
MAX_ID = 200


class RepairAttempt(BaseModel):
    model_config = ConfigDict(frozen=True)

    round: int
    strategy: str
    """`rule:<code>` or `llm`."""
    codes_addressed: list[str]
    patch: list[dict[str, Any]] = []
    """RFC 6902 operations from the spec before the attempt to the spec it proposed."""
    kept: bool = False
    """Whether the loop went on from the patched spec (it fixed what it addressed, or left fewer failures)."""
    valid_after: bool = False
    failed_codes_after: list[str] = []
    notes: list[str] = []
    """What the strategy did, or why it could not."""
    error: str | None = None
    """For an LLM attempt that produced no spec: its failure code and reason."""


class RepairOutcome(BaseModel):
    model_config = ConfigDict(frozen=True)

    task_id: str
    initially_failed: list[str]
    spec: dict[str, Any] | None = None
    """The repaired (or already valid) spec; None when rejected."""
    valid: bool
    rounds_used: int = 0
    attempts: list[RepairAttempt] = []
    rejection: str | None = None
    last_spec: dict[str, Any] | None = None
    """The last spec the loop had when it gave up (for inspection; never published)."""
    validation: TaskValidation | None = None
    """The battery's verdict on `spec` (or on `last_spec` when rejected)."""

    @property
    def repaired(self) -> bool:
        """Valid, and changed by the loop (an already valid task is valid but not repaired)."""
        return self.valid and any(a.kept for a in self.attempts)


class CodeMetrics(BaseModel):
    failed: int
    rescued: int
    rescue_rate: float


class RepairMetrics(BaseModel):
    tasks: int
    initially_valid: int
    initially_invalid: int
    repaired: int
    rejected: int
    rescue_rate: float
    """Repaired-and-valid / initially invalid (0 where nothing was invalid)."""
    attempts: int
    attempts_kept: int
    attempts_by_strategy: dict[str, int]
    by_code: dict[str, CodeMetrics]
    """Per initially failing code: how many tasks failed with it, how many of those were rescued."""
    rounds_histogram: dict[str, int]
    """Rounds used by the rescued tasks."""
    rejection_codes: dict[str, int] = Field(default_factory=dict)
    """Codes still failing on the rejected tasks."""


def failed_codes(validation: TaskValidation, *, include_advisory: bool = False) -> list[str]:
    codes = [r.code for r in validation.results if not r.passed and (include_advisory or r.severity == "mandatory")]
    order = list(BATTERY_CODES)
    return sorted(dict.fromkeys(codes), key=lambda c: order.index(c) if c in order else len(order))


def _default_validate(spec: dict[str, Any]) -> TaskValidation:
    from coworkenv.validate.battery import validate_spec

    return validate_spec(spec)


def _without_lineage(spec: Any) -> Any:
    return {k: v for k, v in spec.items() if k not in LINEAGE_KEYS} if isinstance(spec, dict) else spec


def make_patch(before: Any, after: Any) -> list[dict[str, Any]]:
    return (
        list(jsonpatch.make_patch(before, after))
        if isinstance(before, dict) and isinstance(after, dict)
        else [{"op": "replace", "path": "", "value": after}]
    )


def _first_failure(validation: TaskValidation, code: str) -> CheckOutcome:
    return next(r for r in validation.results if r.code == code and not r.passed)


def _reasons(validation: TaskValidation, codes: list[str]) -> str:
    parts = []
    for code in codes:
        outcome = _first_failure(validation, code)
        parts.append(f"{code}: {outcome.message or 'failed'}")
    return "; ".join(parts)


def _task_id(spec: Any, fallback: str) -> str:
    return spec["id"] if isinstance(spec, dict) and isinstance(spec.get("id"), str) and spec["id"] else fallback


def with_lineage(
    spec: dict[str, Any], original: dict[str, Any], parent: str, round_: int, strategy: str
) -> dict[str, Any]:
    out = copy.deepcopy(spec)
    out["id"] = f"{parent[: MAX_ID - 8]}-r{round_}"
    meta = dict(out.get("meta") or {}) if isinstance(out.get("meta"), dict) else {}
    meta["parent"] = parent
    meta["repair"] = {
        "round": round_,
        "strategy": strategy,
        "patch": make_patch(_without_lineage(original), _without_lineage(out)),
    }
    out["meta"] = meta
    return out


def repair_task(
    spec: dict[str, Any],
    validation: TaskValidation | None = None,
    *,
    rounds: int = DEFAULT_ROUNDS,
    llm: LLMRepairer | None = None,
    validate: Validate | None = None,
    include_advisory: bool = False,
    rules: bool = True,
) -> RepairOutcome:
    """Repair one spec (plain JSON data) given its battery results (validated here when None).

    `rules=False` skips the rule-based repairers (they run episodes on the spec): the LLM-only pass that follows a
    sandboxed rule pass, with `validate` going through the sandbox too.

    The mandatory failures are repaired; with `include_advisory`, so are the advisory failures that have a rule
    (a task whose advisory failure cannot be fixed is still accepted once every mandatory check passes)."""
    validate = validate or _default_validate
    original = copy.deepcopy(spec)
    task_id = _task_id(spec, "<no id>")
    current_val = validation if validation is not None else validate(original)

    def codes_of(val: TaskValidation) -> list[str]:
        """The failures this run works on."""
        codes = failed_codes(val)
        if include_advisory:
            codes += [c for c in failed_codes(val, include_advisory=True) if c not in codes and c in REPAIRERS]
        return codes

    initially = codes_of(current_val)
    if not initially:
        return RepairOutcome(task_id=task_id, initially_failed=[], spec=original, valid=True, validation=current_val)
    current = copy.deepcopy(original)
    attempts: list[RepairAttempt] = []
    kept: list[str] = []
    notes: list[str] = []
    rounds_used = 0

    def consider(round_: int, strategy: str, addressed: list[str], patched: dict[str, Any], extra: list[str]) -> bool:
        nonlocal current, current_val
        before = codes_of(current_val)
        val = validate(patched)
        after = codes_of(val)
        # A spec that no longer parses hides every other failure behind `schema`: never progress.
        broke_schema = "schema" in after and "schema" not in before
        keep = not broke_schema and (not set(addressed) & set(after) or len(after) < len(before))
        attempts.append(
            RepairAttempt(
                round=round_,
                strategy=strategy,
                codes_addressed=addressed,
                patch=make_patch(current, patched),
                kept=keep,
                valid_after=not failed_codes(val),
                failed_codes_after=after,
                notes=extra,
            )
        )
        if keep:
            current, current_val = patched, val
            kept.append(strategy)
        return keep

    def accepted(round_: int) -> RepairOutcome | None:
        if not kept:  # only unfixable advisory failures: the task stays as it was
            return RepairOutcome(
                task_id=task_id,
                initially_failed=initially,
                spec=original,
                valid=True,
                rounds_used=round_,
                attempts=attempts,
                validation=current_val,
            )
        final = with_lineage(current, original, task_id, round_, "+".join(dict.fromkeys(kept)))
        final_val = validate(final)
        if failed_codes(final_val):
            return None  # renaming broke it (should not happen): report it as still failing
        return RepairOutcome(
            task_id=task_id,
            initially_failed=initially,
            spec=final,
            valid=True,
            rounds_used=round_,
            attempts=attempts,
            validation=final_val,
        )

    for round_ in range(1, rounds + 1):
        rounds_used = round_
        progressed = False
        for code in codes_of(current_val) if rules else ():
            if code not in codes_of(current_val) or code not in REPAIRERS:
                continue
            ctx = RepairContext(validation=current_val)
            try:
                patched = REPAIRERS.get(code)(copy.deepcopy(current), _first_failure(current_val, code), ctx)
            except Exception as exc:  # a repairer bug must not sink the batch: record it, go on
                patched = None
                ctx.note(f"repairer rule:{code} raised {short_error(exc)}")
            notes.extend(f"{code}: {n}" for n in ctx.notes)
            if patched is not None and patched != current:
                progressed |= consider(round_, f"rule:{code}", [code], patched, ctx.notes)
            if not codes_of(current_val):
                break
        if codes_of(current_val) and llm is not None:
            remaining = codes_of(current_val)
            failures = [r for r in current_val.results if r.code in remaining and not r.passed]
            result = llm.repair(current, failures, seed=round_)
            if result.spec is None:
                attempts.append(
                    RepairAttempt(
                        round=round_,
                        strategy="llm",
                        codes_addressed=remaining,
                        failed_codes_after=remaining,
                        error=f"{result.code}: {result.reason}",
                    )
                )
                notes.append(f"llm: {result.code}: {result.reason}")
            else:
                progressed |= consider(round_, "llm", remaining, result.spec, [f"reply parsed as a {result.kind}"])
        if not codes_of(current_val) or not progressed:
            break
    if not failed_codes(current_val) and (outcome := accepted(rounds_used)) is not None:
        return outcome
    remaining = codes_of(current_val)
    why = [n for n in dict.fromkeys(notes) if n.split(":", 1)[0] in remaining or n.startswith("llm:")]
    reason = f"still failing after {rounds_used} round(s): {_reasons(current_val, remaining)}"
    if why:
        reason += " | repair: " + "; ".join(why[:6])
    return RepairOutcome(
        task_id=task_id,
        initially_failed=initially,
        spec=None,
        valid=False,
        rounds_used=rounds_used,
        attempts=attempts,
        rejection=reason,
        last_spec=current,
        validation=current_val,
    )


def repair_many(
    items: Iterable[tuple[dict[str, Any], TaskValidation | None]],
    *,
    rounds: int = DEFAULT_ROUNDS,
    llm: LLMRepairer | None = None,
    validate: Validate | None = None,
    include_advisory: bool = False,
    progress: Callable[[RepairOutcome], None] | None = None,
) -> list[RepairOutcome]:
    outcomes = []
    for spec, validation in items:
        outcome = repair_task(
            spec, validation, rounds=rounds, llm=llm, validate=validate, include_advisory=include_advisory
        )
        outcomes.append(outcome)
        if progress is not None:
            progress(outcome)
    return outcomes


def metrics(outcomes: Iterable[RepairOutcome]) -> RepairMetrics:
    outcomes = list(outcomes)
    invalid = [o for o in outcomes if o.initially_failed]
    rescued = [o for o in invalid if o.valid]
    by_code: dict[str, list[int]] = {}
    for o in invalid:
        for code in o.initially_failed:
            counts = by_code.setdefault(code, [0, 0])
            counts[0] += 1
            counts[1] += int(o.valid)
    order = list(BATTERY_CODES)
    attempts = [a for o in outcomes for a in o.attempts]
    strategies: Counter[str] = Counter(a.strategy for a in attempts)
    rejection_codes: Counter[str] = Counter(
        c for o in invalid if not o.valid and o.validation is not None for c in failed_codes(o.validation)
    )
    return RepairMetrics(
        tasks=len(outcomes),
        initially_valid=len(outcomes) - len(invalid),
        initially_invalid=len(invalid),
        repaired=len(rescued),
        rejected=len(invalid) - len(rescued),
        rescue_rate=round(len(rescued) / len(invalid), 4) if invalid else 0.0,
        attempts=len(attempts),
        attempts_kept=sum(1 for a in attempts if a.kept),
        attempts_by_strategy=dict(sorted(strategies.items())),
        by_code={
            code: CodeMetrics(failed=f, rescued=r, rescue_rate=round(r / f, 4))
            for code, (f, r) in sorted(
                by_code.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else len(order)
            )
        },
        rounds_histogram={str(k): v for k, v in sorted(Counter(o.rounds_used for o in rescued).items())},
        rejection_codes=dict(sorted(rejection_codes.items())),
    )
