"""Builders of `eval_results` rows (every column of the table) for the evaluation tests."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from coworkenv.data.build import benchmark_group


def trial(
    task_id: str,
    number: int = 0,
    *,
    score: float = 1.0,
    passed: bool | None = None,
    capabilities: Sequence[str] = ("retrieval",),
    difficulty: int = 1,
    safety: float = 1.0,
    n_violations: int = 0,
    status: str = "ok",
    error: str | None = None,
    n_format_errors: int | None = 0,
    n_turns: int | None = 2,
    completion: float | None = None,
    robustness: float = 1.0,
    agent: str = "oracle",
    eval_id: str = "e1",
    suite: str = "suite-1",
    family: str = "mail_triage",
    **extra: Any,
) -> dict[str, Any]:
    """One trial's row; `passed` defaults to score ≥ 0.75, completion to the score."""
    return {
        "eval_id": eval_id,
        "model": agent,
        "task_id": task_id,
        "trial": number,
        "family": family,
        "capabilities": list(capabilities),
        "benchmark_group": benchmark_group(capabilities),
        "difficulty": difficulty,
        "completion": score if completion is None else completion,
        "safety": safety,
        "robustness": robustness,
        "score": score,
        "passed": score >= 0.75 if passed is None else passed,
        "empty": False,
        "n_violations": n_violations,
        "agent": agent,
        "suite": suite,
        "status": status,
        "error": error,
        "n_format_errors": n_format_errors,
        "n_turns": n_turns,
        "prompt_tokens": 100,
        "completion_tokens": 10,
        "wall_s": 0.5,
        **extra,
    }


def task(task_id: str, scores: Sequence[float], **kwargs: Any) -> list[dict[str, Any]]:
    """The trials of one task, one per score."""
    return [trial(task_id, i, score=s, **kwargs) for i, s in enumerate(scores)]


def bernoulli_rows(pass_probs: Sequence[float], trials: int, seed: int, **kwargs: Any) -> list[dict[str, Any]]:
    """Tasks whose trials pass (score 1) with each task's probability, else score 0."""
    import numpy as np

    rng = np.random.default_rng(seed)
    rows = []
    for i, p in enumerate(pass_probs):
        rows += task(f"t{i:04d}", [float(x) for x in rng.random(trials) < p], **kwargs)
    return rows
