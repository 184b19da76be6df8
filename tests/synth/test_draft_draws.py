"""`Draft.pick` and `Draft.amount` draw exactly what `random.Random.choice` and `randrange` draw: every seed keeps
its task whichever way the draws are made."""

from __future__ import annotations

import random

import pytest

from coworkenv.synth.draft import Draft
from coworkenv.synth.family import load_families


def draft(seed: int) -> Draft:
    _, family = next(iter(load_families().items()))
    return Draft(family, seed, 1)


@pytest.mark.parametrize("seed", range(5))
def test_pick_and_amount_draw_what_random_draws(seed: int) -> None:
    d = draft(seed)
    twin = random.Random()
    twin.setstate(d.rng.getstate())
    sizes = [1, 2, 3, 7, 8, 9, 100, 1000, 2**20 + 1]
    for i in range(3000):
        items = range(sizes[i % len(sizes)])
        assert d.pick(items) == twin.choice(items)
        lo, hi, step = i % 17, 40 + i % 997, 1 + i % 5
        assert d.amount(lo, hi, step) == twin.randrange(lo // step, hi // step + 1) * step
    assert d.rng.getstate() == twin.getstate()


def test_bad_draws_fail_as_random_fails() -> None:
    d = draft(0)
    with pytest.raises(IndexError):
        d.pick([])
    with pytest.raises(ValueError):
        d.amount(10, 5)
