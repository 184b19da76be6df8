"""Battery checks that run the task: the grading-consistency gate piece by piece, prefixes, determinism, faults."""

from __future__ import annotations

from typing import Any

from coworkenv.checks import is_guard
from coworkenv.episode.trajectory import replay
from coworkenv.grading.consistency import violating_step
from coworkenv.grading.play import ANSWER_ONLY_TEXT, play, play_answer_only
from coworkenv.grading.score import check_results, grade, ungraded_text
from coworkenv.validate.battery.context import CheckResultT, Context, battery_check, failed_checks, grade_summary

# --- the grading-consistency gate, piece by piece ----------------------------------------------------------------


@battery_check("oracle_scores_1")
def check_oracle(ctx: Context) -> CheckResultT:
    g = ctx.oracle.grade
    details = {**grade_summary(g), "failed_checks": failed_checks(g), "violations": [v.rule for v in g.violations]}
    if g.ungraded:
        details["ungraded"] = g.ungraded
    if g.score == 1.0:
        return True, details, "the oracle scores 1.0"
    failed = ", ".join(f"{c.id} ({c.reason})" for c in g.checks if c.graded and not c.passed)
    why = "; ".join(p for p in (failed, ungraded_text(g)) if p) or f"safety {g.safety}, robustness {g.robustness}"
    return False, details, f"the oracle scores {g.score}, not 1.0: {why}"


@battery_check("empty_scores_0")
def check_empty(ctx: Context) -> CheckResultT:
    g = ctx.null.grade
    if g.score == 0.0:
        return True, {"score": g.score}, "an empty trajectory scores 0.0"
    return False, {"score": g.score}, f"an empty trajectory scores {g.score}, not 0.0"


@battery_check("answer_only_fails")
def check_answer_only(ctx: Context) -> CheckResultT:
    g = play_answer_only(ctx.spec).grade
    details = {**grade_summary(g), "passing_checks": [c.id for c in g.checks if c.passed]}
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
    holding = []
    # A group counts as a guard when all its members are; prerequisites (`requires`) count as in the score.
    for check, result in zip(ctx.spec.checks, check_results(ctx.spec, ctx.null.evidence), strict=True):
        if is_guard(check):
            continue
        if result.passed:
            holding.append({"id": check.id, "kind": check.kind, "weight": check.weight, "reason": result.reason})
    total = sum(c.weight for c in ctx.spec.checks)
    details = {
        "holding": holding,
        "holding_weight_share": round(sum(h["weight"] for h in holding) / total, 6) if total else 0.0,
    }
    if details["holding_weight_share"] < TRIVIAL_WEIGHT_SHARE:
        # Guards ("leave that record as it is", "send nothing to X") hold before the agent acts by design;
        # they only make a task trivial when doing nothing already earns a large share of the completion.
        return (
            True,
            details,
            f"checks holding on the untouched workspace carry {details['holding_weight_share']:.0%} of the weight",
        )
    return (
        False,
        details,
        f"{len(holding)} check(s) already hold on the untouched workspace: {', '.join(h['id'] for h in holding)}",
    )


@battery_check("prefix_partial")
def check_prefix(ctx: Context) -> CheckResultT:
    effects = ctx.effects
    if len(effects) < 2:
        return (
            True,
            {"applicable": False, "effects": len(effects)},
            f"not applicable: the oracle has {len(effects)} effect(s)",
        )
    steps = [*ctx.spec.solution[: effects[0] + 1], ctx.spec.solution[-1]]
    g = play(ctx.spec, steps).grade
    details = {
        "applicable": True,
        "effects": len(effects),
        "prefix_steps": len(steps),
        "completion": round(g.completion, 6),
        "failed_checks": [c["id"] for c in failed_checks(g)],
    }
    if 0.0 < g.completion < 1.0:
        return True, details, f"the oracle prefix up to its first effect gets completion {g.completion:.3f}"
    if g.completion >= 1.0:
        return (
            False,
            details,
            "the oracle prefix up to its first effect already completes the task: the later effects are not checked",
        )
    return (
        False,
        details,
        "the oracle prefix up to its first effect gets no credit at all: the checks do not reward partial progress",
    )


@battery_check("prohibited_zeroes")
def check_prohibited(ctx: Context) -> CheckResultT:
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
        g = play(spec, [*spec.solution[:-1], step, spec.solution[-1]]).grade
        ok = g.safety == 0.0 and g.score == 0.0
        entry.update(ok=ok, call=step.args, safety=g.safety, score=g.score)
        if not ok:
            problems.append(
                f"prohibited[{i}] ({rule.tool}) violated on top of the oracle: safety {g.safety}, score {g.score}"
            )
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
    return (
        True,
        details,
        f"each of the {len(rules)} prohibited rule(s), violated on top of the oracle, zeroes the score",
    )


@battery_check("deterministic")
def check_deterministic(ctx: Context) -> CheckResultT:
    first = ctx.oracle
    fresh = ctx.fresh
    second = play(fresh)
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
    details = {
        "runs": runs,
        "same_hash": len(hashes) == 1,
        "same_score": len(scores) == 1,
        "differing_checks": differing,
    }
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
    details: dict[str, Any] = {
        "applicable": True,
        "rate": rate,
        "seed": ctx.spec.faults.seed,
        "score": run.grade.score,
        "calls": len(run.evidence.calls),
        "faults_injected": injected,
    }
    if run.grade.score != 1.0:
        return False, details, f"with faults (rate {rate}), the retrying oracle scores {run.grade.score}, not 1.0"
    if injected == 0:
        details["note"] = (
            "advisory: the fault profile injected no fault into the oracle's run; its declared robustness is not exercised"
        )
        return (
            True,
            details,
            f"solvable under faults, but rate {rate} with seed {ctx.spec.faults.seed} injects no fault into the oracle run",
        )
    return True, details, f"the retrying oracle scores 1.0 through {injected} injected fault(s)"
