"""`code`: a grading program over the episode's evidence, run in the sandbox (docs/design/contracts.md, "Check kinds").

For what no declarative check says: the program defines `grade(evidence, judge)` and returns a credit in [0, 1] (a
number, a bool, `(credit, reason)` or `{"credit": …, "reason": …}`); the check earns that share of its weight and
passes at `pass_at`. `evidence` is the episode as plain JSON (`checks.program.evidence_json`: the calls with their
arguments, the assistant's texts and answer, the states before and after) plus `folders`, the read-only folders the
check names by environment variable (`folders`: a benchmark's checkout, say, whose own grader the program runs — an
imported task carries its benchmark's grading this way, never a copy of it). `judge(criteria, text)` returns a score
in [0, 1] from the episode's judge; the program runs again with the answers until it asks nothing new.

The program is untrusted code: it only ever runs in a sandbox (`checks.program`), under `budget_s`. A check whose
folder is not configured, whose program fails, or that asks a judge where there is none is not graded — counted as
not passed and listed, never passed.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field, field_validator

from coworkenv.checks.base import CheckBase, CheckKind, Evidence, Outcome, register_kind
from coworkenv.frozen import EMPTY_LIST

FOLDER_VARIABLE = re.compile(r"COWORKENV_[A-Z0-9_]+")


class Code(CheckBase):
    kind: Literal["code"]
    program: str = Field(
        min_length=1,
        max_length=20_000,
        description="Python source defining grade(evidence, judge) -> credit in [0, 1] (grader-side: never shown to the agent).",
    )
    pass_at: float = Field(1.0, gt=0, le=1, description="The credit at which the check counts as passed.")
    folders: list[str] = Field(
        EMPTY_LIST,
        max_length=4,
        description="Environment variables (COWORKENV_*) naming folders the program may read, mounted read-only "
        "(a benchmark's checkout); unset, the check is not graded.",
    )
    budget_s: float = Field(30.0, gt=0, le=300, description="Wall-clock and CPU seconds of one run of the program.")

    @field_validator("folders")
    @classmethod
    def _named_by_our_variables(cls, names: list[str]) -> list[str]:
        for name in names:
            if not FOLDER_VARIABLE.fullmatch(name):
                raise ValueError(f"{name!r}: a folder is named by a COWORKENV_* environment variable")
        return names


def evaluate(check: Code, ev: Evidence) -> Outcome:
    from coworkenv.checks.program import run_program  # the sandbox starts only where a code check is graded

    return run_program(check, ev)


def recompute(check: dict[str, Any], ev: Evidence, spec: Any) -> Any:
    """A program has no expectation to read off the oracle: one the oracle fails is repaired or rejected, not dropped."""
    return None


KIND = register_kind(CheckKind(name="code", model=Code, evaluate=evaluate, recompute=recompute))
