"""`any_of`: at least one nested check holds (alternative ways to satisfy the task)."""

from __future__ import annotations

from typing import Any, Literal

from coworkenv.checks.base import Outcome
from coworkenv.checks.groups import GroupBase, Result, listed, register_group


class AnyOf(GroupBase):
    kind: Literal["any_of"]


def rule(check: Any, results: list[Result]) -> Outcome:
    passed = [r for r in results if r[1] is True]
    if passed:
        return True, f"{passed[0][0]} holds: {passed[0][2]}"
    ungraded = [r for r in results if r[1] is None]
    if ungraded:
        return None, f"not graded: {listed(ungraded)}"
    return False, f"none of {len(results)} holds: {listed(results)}"


KIND = register_group("any_of", AnyOf, rule)
