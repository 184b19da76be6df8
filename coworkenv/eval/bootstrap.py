"""Resampling over tasks: percentile bootstrap intervals of means and the paired sign-flip test (docs/design/evaluation.md,
"Evaluation metrics and reports"). Seeded, so the same inputs give the same intervals and p-values."""

from __future__ import annotations

import zlib

import numpy as np

_CHUNK = 1024  # resamples per block: bounds memory at ~1k × n values whatever the resample count


def rng_for(seed: int, name: str) -> np.random.Generator:
    """A stream of its own per slice (`capability:retrieval`, …): slices do not share draws, runs repeat them."""
    return np.random.default_rng([seed, zlib.crc32(name.encode("utf-8"))])


def bootstrap_means(
    values: np.ndarray, *, resamples: int, rng: np.random.Generator, confidence: float
) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval of the column means of `values` (tasks × metrics), resampling rows with replacement.

    Each resample is a count per task (how often it was drawn), so the means of all metrics are one matrix product.
    The interval always contains the point estimate (float noise aside, the percentile interval of a mean does)."""
    values = np.asarray(values, dtype=np.float64)
    if values.ndim == 1:
        values = values[:, None]
    n = values.shape[0]
    means = np.empty((resamples, values.shape[1]))
    offsets = None
    for start in range(0, resamples, _CHUNK):
        b = min(_CHUNK, resamples - start)
        draws = rng.integers(0, n, size=(b, n))
        if offsets is None or offsets.shape[0] != b:
            offsets = (np.arange(b) * n)[:, None]
        counts = np.bincount((draws + offsets).ravel(), minlength=b * n).reshape(b, n)
        means[start : start + b] = counts @ values / n
    tail = (1.0 - confidence) / 2.0
    lo, hi = np.quantile(means, [tail, 1.0 - tail], axis=0)
    point = values.mean(axis=0)
    return np.minimum(lo, point), np.maximum(hi, point)


def sign_flip_p(deltas: np.ndarray, *, permutations: int, rng: np.random.Generator) -> float:
    """Two-sided p-value of a paired sign-flip (permutation) test of mean delta = 0.

    Under the null the two runs of a task are exchangeable, so each task's delta is as likely to have either sign. The
    statistic is |mean delta|. With 2^n ≤ `permutations` every sign pattern is enumerated (exact test); otherwise
    `permutations` random patterns, counting the observed one: p = (1 + #{|mean| ≥ observed}) / (1 + permutations)."""
    d = np.asarray(deltas, dtype=np.float64)
    n = d.size
    if n == 0:
        return 1.0
    observed = abs(d.mean())
    tolerance = 1e-12 * max(1.0, float(np.abs(d).max()))  # equal statistics must tie despite float summation order
    if 2**n <= permutations:
        patterns = np.arange(2**n)[:, None] >> np.arange(n)[None, :] & 1
        stats = np.abs((1 - 2 * patterns) @ d) / n
        return float(np.mean(stats >= observed - tolerance))
    extreme = 0
    for start in range(0, permutations, _CHUNK):
        b = min(_CHUNK, permutations - start)
        signs = 1.0 - 2.0 * rng.integers(0, 2, size=(b, n))
        extreme += int(np.count_nonzero(np.abs(signs @ d) / n >= observed - tolerance))
    return (1 + extreme) / (1 + permutations)
