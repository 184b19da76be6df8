"""The resampling primitives: percentile bootstrap of means and the paired sign-flip test."""

from __future__ import annotations

import numpy as np
import pytest

from coworkenv.eval.bootstrap import bootstrap_means, rng_for, sign_flip_p


def test_the_exact_sign_flip_test_by_hand():
    # Five equal positive deltas: of the 2^5 sign patterns only all-plus and all-minus reach |mean| = 1.
    assert sign_flip_p(np.ones(5), permutations=10_000, rng=rng_for(0, "x")) == pytest.approx(2 / 32)
    # Deltas 1, 1, −1: |mean| = 1/3, which every pattern reaches (each has |sum| ≥ 1).
    assert sign_flip_p(np.array([1.0, 1.0, -1.0]), permutations=100, rng=rng_for(0, "x")) == 1.0


def test_no_difference_gives_p_one_and_a_zero_interval():
    zeros = np.zeros(40)  # 2^40 patterns: the sampled test
    assert sign_flip_p(zeros, permutations=2000, rng=rng_for(0, "x")) == 1.0
    lo, hi = bootstrap_means(zeros, resamples=500, rng=rng_for(0, "x"), confidence=0.95)
    assert lo[0] == hi[0] == 0.0


def test_the_sampled_test_counts_the_observed_pattern():
    p = sign_flip_p(np.ones(30), permutations=999, rng=rng_for(0, "x"))
    assert p == pytest.approx(1 / 1000)  # no random pattern of 30 signs is all-equal (chance 2^-29 each)


def test_bootstrap_matches_a_plain_loop():
    values = np.random.default_rng(3).random((25, 2))
    lo, hi = bootstrap_means(values, resamples=3000, rng=rng_for(1, "a"), confidence=0.9)
    rng = np.random.default_rng(11)
    means = np.array([values[rng.integers(0, 25, 25)].mean(axis=0) for _ in range(3000)])
    ref_lo, ref_hi = np.quantile(means, [0.05, 0.95], axis=0)
    np.testing.assert_allclose(lo, ref_lo, atol=0.02)
    np.testing.assert_allclose(hi, ref_hi, atol=0.02)


def test_streams_are_seeded_per_slice():
    draw = lambda seed, name: rng_for(seed, name).integers(0, 1 << 30, 4).tolist()  # noqa: E731
    assert draw(0, "overall") == draw(0, "overall")
    assert draw(0, "overall") != draw(0, "group:general") != draw(1, "group:general")
