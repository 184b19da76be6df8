"""`at_least`: k of the nested checks hold (a k-of-N threshold)."""

from __future__ import annotations

from typing import Any, Literal, Self

from pydantic import Field, model_validator

from coworkenv.checks.base import Outcome
from coworkenv.checks.groups import GroupBase, Result, listed, register_group


class AtLeast(GroupBase):
    kind: Literal["at_least"]
    k: int = Field(ge=1)

    @model_validator(mode="after")
    def _k_fits(self) -> Self:
        if self.k > len(self.checks):
            raise ValueError(f"k = {self.k} is more than its {len(self.checks)} nested check(s)")
        return self


def rule(check: Any, results: list[Result]) -> Outcome:
    passed = [r for r in results if r[1] is True]
    ungraded = [r for r in results if r[1] is None]
    failed = [r for r in results if r[1] is False]
    if len(passed) >= check.k:
        return True, f"{len(passed)} of {len(results)} hold (need {check.k}): {', '.join(r[0] for r in passed)}"
    if len(passed) + len(ungraded) < check.k:
        return False, f"{len(passed)} of {len(results)} hold, need {check.k}: {listed(failed)}"
    return None, f"{len(passed)} of {len(results)} hold (need {check.k}); not graded: {listed(ungraded)}"


KIND = register_group("at_least", AtLeast, rule)
