"""`all_of`: every nested check holds (multiplicative: one failure fails the group)."""

from __future__ import annotations

from typing import Any, Literal

from coworkenv.checks.base import Outcome
from coworkenv.checks.groups import GroupBase, Result, listed, register_group


class AllOf(GroupBase):
    kind: Literal["all_of"]


def rule(check: Any, results: list[Result]) -> Outcome:
    failed = [r for r in results if r[1] is False]
    if failed:
        return False, f"{len(failed)} of {len(results)} fail: {listed(failed)}"
    ungraded = [r for r in results if r[1] is None]
    if ungraded:
        return None, f"not graded: {listed(ungraded)}"
    return True, f"all {len(results)} hold"


KIND = register_group("all_of", AllOf, rule)
