"""pass@k and pass^k over n trials with c passes (docs/design/contracts.md, "Scoring")."""

from __future__ import annotations

from math import comb


def _check(n: int, c: int, k: int) -> None:
    if n <= 0 or not 0 <= c <= n or not 1 <= k:
        raise ValueError(f"need n > 0, 0 <= c <= n and k >= 1 (got n={n}, c={c}, k={k})")


def pass_at_k(n: int, c: int, k: int) -> float:
    """Probability that at least one of k trials drawn without replacement passes: 1 − C(n−c, k)/C(n, k)."""
    _check(n, c, k)
    if k > n:
        raise ValueError(f"k={k} is larger than the number of trials n={n}")
    return 1.0 - comb(n - c, k) / comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Probability that k independent trials all pass, estimated as (c/n)^k."""
    _check(n, c, k)
    return (c / n) ** k
