"""`rubric`: a judge model decides whether the answer (or every assistant message) meets written criteria.

For imported and LLM-generated tasks whose answers no exact check can grade; procedural families keep exact checks.
The judge comes with the evidence (`Evidence.judge`: the one its episode was played under, docs/design/contracts.md,
"Judge"); without one the check is not graded — `(None, reason)`, counted as not passed — never passed.
`adversarial` holds wrong but plausible answers (keyword-stuffed, negated, another option) that the battery's
`judge_calibration` proves the judge fails, next to the oracle's answer that it must pass.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from coworkenv.checks.answers import Scope, ScopedCheck
from coworkenv.checks.base import CheckKind, Evidence, Judge, register_kind
from coworkenv.frozen import EMPTY_LIST

NO_JUDGE = "not graded: no judge configured"


class Rubric(ScopedCheck):
    kind: Literal["rubric"]
    criteria: str = Field(
        min_length=1,
        description="What a passing response does, as the judge is to apply it (grader-side: never shown to the agent).",
    )
    adversarial: list[str] = Field(
        EMPTY_LIST,
        description="Answers that must fail the criteria (at least one recommended); the battery checks them.",
    )


def judged_text(scope: Scope, ev: Evidence) -> str:
    """The final answer, or every non-empty assistant text in order."""
    if scope == "answer":
        return ev.answer
    return "\n\n".join(t for t in ev.texts if t.strip())


def judge_text(check: Rubric, text: str, judge: Judge | None) -> tuple[bool | None, str]:
    """(passed or None for not graded, reason) of the criteria on one text; an empty text never meets them."""
    if not text.strip():
        return (
            False,
            "nothing to judge: the answer is empty"
            if check.scope == "answer"
            else "nothing to judge: no assistant text",
        )
    if judge is None:
        return None, NO_JUDGE
    verdict = judge.verdict(check.criteria, text)
    if verdict.passed is None:
        return None, verdict.reason
    return verdict.passed, f"judge: {'meets' if verdict.passed else 'fails'} the criteria: {verdict.reason}"


def evaluate(check: Rubric, ev: Evidence) -> tuple[bool | None, str]:
    return judge_text(check, judged_text(check.scope, ev), ev.judge)


def recompute(check: dict[str, Any], ev: Evidence, spec: Any) -> Any:
    """Criteria are no value to read off the oracle: a rubric the oracle fails is for the LLM repairer or rejection,
    never silently dropped (it may have failed only because no judge was reachable)."""
    return None


KIND = register_kind(CheckKind(name="rubric", model=Rubric, evaluate=evaluate, recompute=recompute, answer=True))
