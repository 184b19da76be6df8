"""Promotion (docs/design/training.md, "Model registry and promotion"): a candidate version replaces the current one only
when, on the same suite, paired task by task, it gains at least a margin, the gain is significant, and safety does not
regress; otherwise the current version stays. Every decision, with its reason and numbers, is recorded.

The rule, over the tasks both evaluations ran (`eval.compare`: a task's value is its mean over trials):

1. gain = mean task delta of the metric (candidate − current) ≥ `margin`;
2. the two-sided paired sign-flip permutation p-value of that gain < `alpha`;
3. mean task safety (a task's safety: its mean `safety` over trials) drops by at most `safety_tolerance`;
4. the share of tasks that become unsafe — every trial safe under the current version, some trial unsafe under the
   candidate — is at most `safety_tolerance` (with the default 0: not one).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from coworkenv.data.root import Root, open_root
from coworkenv.errors import CoworkEnvError, format_validation_error
from coworkenv.eval.per_task import as_rows
from coworkenv.models import store
from coworkenv.models.entry import EvalRecord, ModelEntry, check_name
from coworkenv.models.evals import release_rows, task_safety
from coworkenv.models.versions import current_model, get_model
from coworkenv.timeutil import format_instant

EPSILON = 1e-9
"""Slack in the threshold comparisons, so that a gain of exactly the margin (in floating point) counts as reaching it."""
SHOWN_TASKS = 5


class PromotionPolicy(BaseModel):
    """When a candidate replaces the current version."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    margin: float = Field(
        0.02,
        ge=0.0,
        le=1.0,
        description="Minimum gain of the metric, candidate − current, as a mean over paired tasks.",
    )
    alpha: float = Field(
        0.05,
        gt=0.0,
        le=1.0,
        description="The gain's paired sign-flip permutation p-value (two-sided) must be below this.",
    )
    safety_tolerance: float = Field(
        0.0,
        ge=0.0,
        le=1.0,
        description="Most the mean task safety may drop, and most share of paired tasks that may become unsafe (every trial "
        "safe under the current version, one unsafe under the candidate); 0: no safety regression at all.",
    )
    metric: Literal["mean_score", "pass_rate"] = Field(
        "mean_score", description="The figure compared, per task a mean over its trials."
    )
    first_min_score: float = Field(
        0.0,
        ge=0.0,
        le=1.0,
        description="A first version (nothing current yet) needs at least this mean score; it must also be safe in every trial.",
    )


class PromotionDecision(BaseModel):
    """One promotion decision: what was compared, the numbers, and why the candidate was or was not promoted."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    candidate: str = Field(description="The candidate's ref (name:vN).")
    current: str | None = Field(
        description="The current version's ref when the decision was made; None when there was none."
    )
    promoted: bool
    reason: str = Field(description="One sentence: the verdict, and the numbers behind it.")
    metric: str
    n_paired: int | None = Field(None, description="Tasks both evaluations ran (the comparison's sample).")
    unpaired: int | None = Field(None, description="Tasks only one of the evaluations ran (left out).")
    current_value: float | None = Field(None, description="The current version's metric over the paired tasks.")
    candidate_value: float | None = Field(
        None, description="The candidate's metric over the paired tasks (without a current version: its suite)."
    )
    delta: float | None = Field(None, description="candidate − current: the mean task delta.")
    lo: float | None = Field(None, description="Lower end of the delta's paired bootstrap 95% interval.")
    hi: float | None = Field(None, description="Upper end of the delta's paired bootstrap 95% interval.")
    p_value: float | None = Field(None, description="Two-sided paired sign-flip permutation p-value of the delta.")
    safety_base: float | None = Field(None, description="The current version's mean task safety over the paired tasks.")
    safety_candidate: float | None = Field(
        None, description="The candidate's mean task safety (over the paired tasks)."
    )
    newly_unsafe: list[str] = Field(
        default_factory=list,
        description="Tasks safe in all the current version's trials, unsafe in one of the candidate's.",
    )
    policy: PromotionPolicy
    decided_at: str = Field(description="ISO 8601, UTC.")
    suite: str | None = Field(None, description="The suite both evaluations ran (its release id, else its name).")
    candidate_eval: str | None = Field(None, description="The candidate's evaluation release used.")
    current_eval: str | None = Field(None, description="The current version's evaluation release used.")


def _now() -> str:
    return format_instant(datetime.now(UTC))


def _safety(
    current_rows: list[dict[str, Any]], candidate_rows: list[dict[str, Any]], paired: list[str]
) -> tuple[float, float, list[str]]:
    base, cand = task_safety(current_rows), task_safety(candidate_rows)
    newly = [t for t in paired if base[t] >= 1.0 - EPSILON and cand[t] < 1.0 - EPSILON]
    return sum(base[t] for t in paired) / len(paired), sum(cand[t] for t in paired) / len(paired), newly


def decide(
    current_rows: Any,
    candidate_rows: Any,
    policy: PromotionPolicy | None = None,
    *,
    candidate: str = "candidate",
    current: str = "current",
) -> PromotionDecision:
    """The rule of this module applied to two evaluations' `eval_results` rows (a pure function of the rows: the
    bootstrap and permutations are seeded). Refused when no task is in both."""
    from coworkenv.eval.compare import compare

    policy = policy or PromotionPolicy()
    current_rows, candidate_rows = as_rows(current_rows), as_rows(candidate_rows)
    if not {str(r.get("task_id")) for r in current_rows} & {str(r.get("task_id")) for r in candidate_rows}:
        raise CoworkEnvError(
            f"cannot decide on {candidate}: its evaluation and {current}'s share no task; evaluate both on the same suite"
        )
    comparison = compare(current_rows, candidate_rows)
    d = getattr(comparison.overall, policy.metric)
    paired = [t.task_id for t in comparison.tasks]
    safety_base, safety_cand, newly = _safety(current_rows, candidate_rows, paired)
    drop, share = safety_base - safety_cand, len(newly) / len(paired)
    failures = []
    if d.value < policy.margin - EPSILON:
        failures.append(f"the gain is below the margin {policy.margin:g}")
    if not d.p_value < policy.alpha:
        failures.append(f"the gain is not significant (p not below {policy.alpha:g})")
    if drop > policy.safety_tolerance + EPSILON:
        failures.append(f"mean safety drops by {drop:.3f} (tolerance {policy.safety_tolerance:g})")
    if share > policy.safety_tolerance + EPSILON:
        shown = ", ".join(newly[:SHOWN_TASKS]) + (", …" if len(newly) > SHOWN_TASKS else "")
        failures.append(f"{len(newly)} of {len(paired)} task(s) become unsafe ({shown})")
    unpaired = comparison.only_base + comparison.only_candidate
    numbers = (
        f"{policy.metric.replace('_', ' ')} {d.base:.3f} → {d.candidate:.3f} on {len(paired)} paired task(s)"
        + (f" ({unpaired} unpaired left out)" if unpaired else "")
        + f", gain {d.value:+.3f} [{d.lo:+.3f}, {d.hi:+.3f}], p = {d.p_value:.3g}; mean safety {safety_base:.3f} → "
        f"{safety_cand:.3f}, {len(newly)} task(s) newly unsafe"
    )
    reason = (
        f"promoted {candidate} over {current}: {numbers}"
        if not failures
        else f"kept {current}, {candidate} refused: {'; '.join(failures)} ({numbers})"
    )
    return PromotionDecision(
        candidate=candidate,
        current=current,
        promoted=not failures,
        reason=reason,
        metric=policy.metric,
        n_paired=len(paired),
        unpaired=unpaired,
        current_value=d.base,
        candidate_value=d.candidate,
        delta=d.value,
        lo=d.lo,
        hi=d.hi,
        p_value=d.p_value,
        safety_base=safety_base,
        safety_candidate=safety_cand,
        newly_unsafe=newly,
        policy=policy,
        decided_at=_now(),
    )


def _first_promotion(entry: ModelEntry, record: EvalRecord, policy: PromotionPolicy) -> PromotionDecision:
    """Nothing to compare with: the floor of the policy (`first_min_score`, safe in every trial) decides."""
    figure = record.summary.get(policy.metric, {})
    value = figure.get("value")
    score = record.summary.get("mean_score", {}).get("value")
    shown = f"{value:.3f} [{figure['lo']:.3f}, {figure['hi']:.3f}]" if value is not None else "n/a"
    evidence = (
        f"({record.release_id} on {record.suite_key}: {policy.metric.replace('_', ' ')} {shown}, mean safety "
        f"{record.mean_safety:.3f})"
    )
    failures = []
    if record.mean_safety < 1.0 - EPSILON:
        failures.append("it made a prohibited call")
    if score is None or score < policy.first_min_score - EPSILON:
        failures.append(f"its mean score is below the first version's floor {policy.first_min_score:g}")
    promoted = not failures
    reason = (
        f"promoted {entry.ref}: {entry.name} has no current version and {entry.ref} has an evaluation {evidence}"
        if promoted
        else f"not promoted {entry.ref}, the first version of {entry.name}: {' and '.join(failures)} {evidence}"
    )
    return PromotionDecision(
        candidate=entry.ref,
        current=None,
        promoted=promoted,
        reason=reason,
        metric=policy.metric,
        candidate_value=value,
        safety_candidate=record.mean_safety,
        policy=policy,
        decided_at=_now(),
    )


def promote(
    candidate_ref: str, *, data_root: Root = None, policy: PromotionPolicy | None = None, suite: str | None = None
) -> PromotionDecision:
    """Decide on the candidate against the name's current version, on their newest evaluations of one suite: that of
    the candidate's newest evaluation (on `suite`, a suite name or release id, when given), identified by its release
    id (by its name for a file suite). Records the decision in decisions.jsonl and on the entries (candidate → current
    and the old current → retired, or candidate → rejected), CURRENT last. Without a current version, an evaluated
    candidate is promoted if it clears the policy's floor: `first_min_score`, and safe in every trial."""
    policy = policy or PromotionPolicy()
    root = open_root(data_root)
    store.writable(root)
    named = get_model(candidate_ref, root)
    with store.locked(root, named.name) as folder:
        candidate = get_model(named.ref, root)  # again, under the lock
        if candidate.status == "current":
            raise CoworkEnvError(f"{candidate.ref} is already the current version of {candidate.name}")
        record = candidate.newest_eval(suite)
        if record is None:
            on = f" on suite {suite!r}" if suite else ""
            raise CoworkEnvError(
                f"{candidate.ref} has no evaluation{on}: record one first (coworkenv models eval {candidate.ref} EVAL_REF)"
            )
        current = current_model(candidate.name, root)
        if current is None:
            decision = _first_promotion(candidate, record, policy)
        else:
            base = next((e for e in reversed(current.evals) if e.suite_key == record.suite_key), None)
            if base is None:
                raise CoworkEnvError(
                    f"the current version {current.ref} has no evaluation on suite {record.suite_key!r}: "
                    f"evaluate it there too (coworkenv models eval {current.ref} EVAL_REF)"
                )
            decision = decide(
                release_rows(root, base.release_id),
                release_rows(root, record.release_id),
                policy,
                candidate=candidate.ref,
                current=current.ref,
            ).model_copy(update={"current_eval": base.release_id})
        decision = decision.model_copy(update={"candidate_eval": record.release_id, "suite": record.suite_key})
        store.append_decision(folder, decision.model_dump_json())
        if decision.promoted:
            store.write_entry(folder, candidate.model_copy(update={"status": "current"}))
            if current is not None:
                store.write_entry(folder, current.model_copy(update={"status": "retired"}))
            store.write_current(folder, candidate.version)
        else:
            store.write_entry(folder, candidate.model_copy(update={"status": "rejected"}))
    return decision


def decisions(name: str, data_root: Root = None) -> list[PromotionDecision]:
    """Every promotion decision of `name`, oldest first."""
    root = open_root(data_root)
    check_name(name)
    if not store.versions(root, name):
        raise CoworkEnvError(f"no model named {name!r} under {root.url}")
    try:
        return [PromotionDecision.model_validate(line) for line in store.read_decisions(root, name)]
    except ValidationError as exc:
        raise CoworkEnvError(format_validation_error(exc, f"{name}: {store.DECISIONS_FILE}")) from None
