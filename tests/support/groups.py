"""A kind made "not graded" for a test: its registry entry's evaluator swapped for one answering `(None, reason)`."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from coworkenv.checks import CHECKS

NO_JUDGE = "not graded: no judge configured"


@contextmanager
def not_graded(monkeypatch: pytest.MonkeyPatch, kind: str, reason: str = NO_JUDGE) -> Iterator[None]:
    """Within the block, every check of `kind` is not graded, as a rubric without a judge is."""
    entry = CHECKS.get(kind)
    with monkeypatch.context() as patch:
        patch.setitem(CHECKS._items, kind, dataclasses.replace(entry, evaluate=lambda check, ev: (None, reason)))
        yield
