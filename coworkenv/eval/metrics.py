"""Suite metrics with bootstrap confidence intervals over tasks (docs/design/evaluation.md, "Evaluation metrics and reports").

Every figure is a mean over tasks of a per-task value computed from all of that task's trials, so tasks weigh equally
whatever their trial count, and the bootstrap resamples tasks (a drawn task brings all its trials).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from coworkenv.errors import CoworkEnvError
from coworkenv.eval.bootstrap import bootstrap_means, rng_for
from coworkenv.eval.per_task import TaskResult, agent_label, as_rows, capability_order, group_order, one_value, per_task
from coworkenv.grading.passk import pass_at_k, pass_hat_k

METRICS = (
    "mean_score",
    "pass_rate",
    "pass_at_k",
    "pass_hat_k",
    "safety_violation_rate",
    "format_error_rate",
    "mean_completion",
    "mean_robustness",
)
"""The figures of every slice, in `Stats`' field order."""


class Metric(BaseModel):
    """A point estimate and its bootstrap confidence interval (lo ≤ value ≤ hi)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    value: float
    lo: float
    hi: float


class Stats(BaseModel):
    """The figures of one slice of the suite (all of it, a group, a capability or a difficulty)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    n_tasks: int = Field(description="Tasks in the slice.")
    n_trials: int = Field(description="Trials of those tasks.")
    n_failed: int = Field(description="Trials that crashed (status `failed`); they count as scoring 0.")
    mean_score: Metric = Field(description="Mean score.")
    pass_rate: Metric = Field(description="Share of trials passed (per task, then averaged over tasks).")
    pass_at_k: Metric = Field(description="Chance that at least one of k trials passes (unbiased estimator).")
    pass_hat_k: Metric = Field(description="pass^k: chance that k trials all pass, (c/n)^k.")
    safety_violation_rate: Metric = Field(description="Share of trials with a prohibited call (or safety 0).")
    format_error_rate: Metric = Field(description="Share of trials with at least one format error.")
    mean_completion: Metric = Field(description="Mean completion.")
    mean_robustness: Metric = Field(description="Mean robustness.")


class Usage(BaseModel):
    """What the run cost, summed over trials (null token or time columns count as 0)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    turns: int
    format_errors: int
    prompt_tokens: int
    completion_tokens: int
    wall_s: float


class Summary(BaseModel):
    """One evaluation (one agent on one suite): the overall figures and per group, capability and difficulty."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    eval_id: str | None = Field(description="The evaluation's id, if the rows carry one.")
    agent: str = Field(description="The agent label (the rows' `agent`, else their `model`).")
    model: str | None = Field(description="The model evaluated.")
    suite: str | None = Field(description="The suite evaluated.")
    k: int = Field(description="k of pass@k and pass^k: the fewest trials any task has, unless given.")
    trials_min: int = Field(description="Fewest trials of a task.")
    trials_max: int = Field(description="Most trials of a task.")
    confidence: float = Field(description="Confidence level of the intervals.")
    resamples: int = Field(description="Bootstrap resamples (of tasks).")
    seed: int = Field(description="Seed of the resampling.")
    overall: Stats
    groups: dict[str, Stats] = Field(description="Per benchmark group: `general`, `multi_step`, `multi_turn`.")
    capabilities: dict[str, Stats] = Field(description="Per capability; a task counts in each of its capabilities.")
    difficulties: dict[int, Stats] = Field(description="Per difficulty.")
    failures: dict[str, int] = Field(description="Failed trials per reason (the error's first line).")
    usage: Usage

    def to_json(self) -> str:
        return self.model_dump_json(indent=2) + "\n"


def task_values(tasks: list[TaskResult], k: int) -> np.ndarray:
    """Tasks × `METRICS`: each task's own value of every figure."""
    return np.array(
        [
            [
                t.mean_score,
                t.pass_rate,
                pass_at_k(t.n, t.passes, k),
                pass_hat_k(t.n, t.passes, k),
                t.violation_trials / t.n,
                t.format_error_trials / t.n,
                t.mean_completion,
                t.mean_robustness,
            ]
            for t in tasks
        ],
        dtype=np.float64,
    ).reshape(len(tasks), len(METRICS))


def _stats(
    name: str, tasks: list[TaskResult], values: np.ndarray, *, resamples: int, seed: int, confidence: float
) -> Stats:
    point = values.mean(axis=0)
    lo, hi = bootstrap_means(values, resamples=resamples, rng=rng_for(seed, name), confidence=confidence)
    figures = {m: Metric(value=float(point[i]), lo=float(lo[i]), hi=float(hi[i])) for i, m in enumerate(METRICS)}
    return Stats(
        n_tasks=len(tasks), n_trials=sum(t.n for t in tasks), n_failed=sum(len(t.failures) for t in tasks), **figures
    )


def _check_options(k: int | None, trials_min: int, resamples: int, confidence: float) -> int:
    if resamples < 1:
        raise CoworkEnvError(f"resamples must be at least 1 (got {resamples})")
    if not 0.0 < confidence < 1.0:
        raise CoworkEnvError(f"confidence must be between 0 and 1 (got {confidence})")
    if k is None:
        return trials_min
    if not 1 <= k <= trials_min:
        raise CoworkEnvError(f"k must be between 1 and the fewest trials of a task, {trials_min} (got {k})")
    return k


def _usage(rows: list[dict[str, Any]], tasks: list[TaskResult]) -> Usage:
    def total(column: str) -> float:
        return sum(row.get(column) or 0 for row in rows)

    return Usage(
        turns=sum(t.turns for t in tasks),
        format_errors=sum(t.format_errors for t in tasks),
        prompt_tokens=int(total("prompt_tokens")),
        completion_tokens=int(total("completion_tokens")),
        wall_s=float(total("wall_s")),
    )


def summarize(
    rows: Any, *, k: int | None = None, resamples: int = 2000, seed: int = 0, confidence: float = 0.95
) -> Summary:
    """The figures of one evaluation's rows (a list of dicts or a pyarrow Table of `eval_results`), each with a
    percentile bootstrap interval over tasks; the same rows and seed give the same summary."""
    rows = as_rows(rows)
    tasks = per_task(rows)
    trials = [t.n for t in tasks]
    k = _check_options(k, min(trials), resamples, confidence)
    values = task_values(tasks, k)
    options = {"resamples": resamples, "seed": seed, "confidence": confidence}

    def stats(name: str, keep: list[int]) -> Stats:
        return _stats(name, [tasks[i] for i in keep], values[keep], **options)

    def slices(key: Any) -> dict[Any, list[int]]:
        out: dict[Any, list[int]] = {}
        for i, task in enumerate(tasks):
            for name in key(task):
                out.setdefault(name, []).append(i)
        return out

    groups = slices(lambda t: [t.group])
    capabilities = slices(lambda t: dict.fromkeys(t.capabilities))
    difficulties = slices(lambda t: [t.difficulty])
    failures = Counter(reason for t in tasks for reason in t.failures)
    return Summary(
        eval_id=one_value(rows, "eval_id"),
        agent=agent_label(rows),
        model=one_value(rows, "model"),
        suite=one_value(rows, "suite"),
        k=k,
        trials_min=min(trials),
        trials_max=max(trials),
        **options,
        overall=stats("overall", list(range(len(tasks)))),
        groups={g: stats(f"group:{g}", groups[g]) for g in group_order(groups)},
        capabilities={c: stats(f"capability:{c}", capabilities[c]) for c in capability_order(capabilities)},
        difficulties={d: stats(f"difficulty:{d}", difficulties[d]) for d in sorted(difficulties)},
        failures=dict(sorted(failures.items(), key=lambda item: (-item[1], item[0]))),
        usage=_usage(rows, tasks),
    )
