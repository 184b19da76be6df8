"""Paired comparison of two evaluations on the same tasks (docs/design/evaluation.md, "Evaluation metrics and reports").

Tasks present in both are paired by id; a task's delta is candidate − base of its mean over trials. The overall delta
is the mean task delta, with a paired bootstrap interval (resampling tasks) and a two-sided paired sign-flip
permutation p-value; the same per capability and per group.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from coworkenv.errors import CoworkEnvError
from coworkenv.eval.bootstrap import bootstrap_means, rng_for, sign_flip_p
from coworkenv.eval.per_task import TaskResult, agent_label, as_rows, capability_order, group_order, per_task

EXAMPLE_IDS = 20
"""Unpaired task ids listed (all are counted)."""


class Delta(BaseModel):
    """candidate − base of a mean over tasks, its paired bootstrap interval and sign-flip p-value."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    base: float
    candidate: float
    value: float
    lo: float
    hi: float
    p_value: float


class SliceDelta(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    n_tasks: int = Field(description="Paired tasks in the slice.")
    mean_score: Delta
    pass_rate: Delta


class TaskDelta(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    task_id: str
    base_score: float
    candidate_score: float
    score_delta: float
    base_pass_rate: float
    candidate_pass_rate: float
    pass_rate_delta: float


class Comparison(BaseModel):
    """Candidate against base, task by task."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    base_agent: str
    candidate_agent: str
    test: str = Field(description="How p-values are computed.")
    confidence: float
    resamples: int = Field(description="Bootstrap resamples of paired tasks.")
    permutations: int = Field(description="Sign patterns drawn (all of them when 2^n is not more).")
    seed: int
    n_paired: int
    only_base: int = Field(description="Tasks only the base run has (left out of every delta).")
    only_candidate: int = Field(description="Tasks only the candidate run has (left out of every delta).")
    only_base_ids: list[str] = Field(description=f"The first {EXAMPLE_IDS} of them, sorted.")
    only_candidate_ids: list[str] = Field(description=f"The first {EXAMPLE_IDS} of them, sorted.")
    overall: SliceDelta
    groups: dict[str, SliceDelta]
    capabilities: dict[str, SliceDelta]
    tasks: list[TaskDelta] = Field(description="Per paired task, sorted by task id.")

    def to_json(self) -> str:
        return self.model_dump_json(indent=2) + "\n"


TEST = "paired sign-flip permutation test of the mean task delta (two-sided)"


def _delta(
    name: str, base: np.ndarray, cand: np.ndarray, *, resamples: int, permutations: int, seed: int, confidence: float
) -> Delta:
    d = cand - base
    lo, hi = bootstrap_means(d, resamples=resamples, rng=rng_for(seed, f"bootstrap:{name}"), confidence=confidence)
    p = sign_flip_p(d, permutations=permutations, rng=rng_for(seed, f"permutation:{name}"))
    return Delta(
        base=float(base.mean()),
        candidate=float(cand.mean()),
        value=float(d.mean()),
        lo=float(lo[0]),
        hi=float(hi[0]),
        p_value=p,
    )


def _slice(name: str, pairs: list[tuple[TaskResult, TaskResult]], **options: Any) -> SliceDelta:
    base = np.array([[b.mean_score, b.pass_rate] for b, _ in pairs], dtype=np.float64)
    cand = np.array([[c.mean_score, c.pass_rate] for _, c in pairs], dtype=np.float64)
    return SliceDelta(
        n_tasks=len(pairs),
        mean_score=_delta(f"{name}:score", base[:, 0], cand[:, 0], **options),
        pass_rate=_delta(f"{name}:pass", base[:, 1], cand[:, 1], **options),
    )


def compare(
    base_rows: Any,
    candidate_rows: Any,
    *,
    resamples: int = 2000,
    permutations: int = 10000,
    seed: int = 0,
    confidence: float = 0.95,
) -> Comparison:
    """Candidate against base over the tasks both ran; slices (capabilities, groups) are the base run's."""
    if resamples < 1 or permutations < 1:
        raise CoworkEnvError(f"resamples and permutations must be at least 1 (got {resamples}, {permutations})")
    if not 0.0 < confidence < 1.0:
        raise CoworkEnvError(f"confidence must be between 0 and 1 (got {confidence})")
    base_rows, candidate_rows = as_rows(base_rows), as_rows(candidate_rows)
    base = {t.task_id: t for t in per_task(base_rows)}
    cand = {t.task_id: t for t in per_task(candidate_rows)}
    paired = sorted(base.keys() & cand.keys())
    if not paired:
        raise CoworkEnvError("compare: the two evaluations share no task; nothing to pair")
    pairs = [(base[i], cand[i]) for i in paired]
    options = {"resamples": resamples, "permutations": permutations, "seed": seed, "confidence": confidence}

    def slices(key: Any) -> dict[str, list[tuple[TaskResult, TaskResult]]]:
        out: dict[str, list[tuple[TaskResult, TaskResult]]] = {}
        for pair in pairs:
            for name in key(pair[0]):
                out.setdefault(name, []).append(pair)
        return out

    groups = slices(lambda t: [t.group])
    capabilities = slices(lambda t: dict.fromkeys(t.capabilities))
    only_base, only_cand = sorted(base.keys() - cand.keys()), sorted(cand.keys() - base.keys())
    return Comparison(
        base_agent=agent_label(base_rows),
        candidate_agent=agent_label(candidate_rows),
        test=TEST,
        **options,
        n_paired=len(pairs),
        only_base=len(only_base),
        only_candidate=len(only_cand),
        only_base_ids=only_base[:EXAMPLE_IDS],
        only_candidate_ids=only_cand[:EXAMPLE_IDS],
        overall=_slice("overall", pairs, **options),
        groups={g: _slice(f"group:{g}", groups[g], **options) for g in group_order(groups)},
        capabilities={c: _slice(f"capability:{c}", capabilities[c], **options) for c in capability_order(capabilities)},
        tasks=[
            TaskDelta(
                task_id=b.task_id,
                base_score=b.mean_score,
                candidate_score=c.mean_score,
                score_delta=c.mean_score - b.mean_score,
                base_pass_rate=b.pass_rate,
                candidate_pass_rate=c.pass_rate,
                pass_rate_delta=c.pass_rate - b.pass_rate,
            )
            for b, c in pairs
        ],
    )
