"""Episodes that should not pass, made from an imported task's oracle: what the agreement measure plays besides the
oracle and the empty episode (bench/claw_agreement.py). Each is the oracle's steps changed one way a weak agent goes
wrong; a perturbation that passes where the original grader fails it is a grading gap of the import.

- `reads_skipped`: the oracle without its read calls (the writes and the answer from memory);
- `partial`: the first half of the oracle's writes, and its answer;
- `negated`: the oracle's work, its answer denied ("It is not true that …");
- `wrong_value`: the oracle's work, every number of its answer changed;
- `prohibited`: the oracle's work and one call that a prohibited rule names.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from coworkenv.spec.task import AnswerStep, TaskSpec, ToolStep
from coworkenv.workspace import TOOLS

Steps = list[Any]

NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def _is_read(step: Any) -> bool:
    return isinstance(step, ToolStep) and step.tool in TOOLS and TOOLS.get(step.tool).kind == "read"


def _answers(steps: Steps, change: Callable[[str], str]) -> Steps | None:
    changed = [AnswerStep(answer=change(s.answer)) if isinstance(s, AnswerStep) else s for s in steps]
    return changed if changed != steps else None


def reads_skipped(spec: TaskSpec) -> Steps | None:
    steps = [s for s in spec.solution if not _is_read(s)]
    return steps if len(steps) < len(spec.solution) else None


def partial(spec: TaskSpec) -> Steps | None:
    writes = [i for i, s in enumerate(spec.solution) if isinstance(s, ToolStep) and not _is_read(s)]
    if len(writes) < 2:
        return None
    dropped = set(writes[len(writes) // 2 :])
    return [s for i, s in enumerate(spec.solution) if i not in dropped]


def negated(spec: TaskSpec) -> Steps | None:
    return _answers(list(spec.solution), lambda a: f"It is not true that {a}" if a.strip() else a)


def wrong_value(spec: TaskSpec) -> Steps | None:
    def change(answer: str) -> str:
        return NUMBER.sub(lambda m: str(int(re.sub(r"\D", "", m.group()) or "0") + 7), answer)

    return _answers(list(spec.solution), change)


def prohibited(spec: TaskSpec) -> Steps | None:
    """The oracle's steps and, before its answer, a call the first prohibited rule on an offered tool names (its
    argument values where they are plain, a glob's literal part otherwise), on top of the arguments of the oracle's
    first call of that tool, if any (so that the call can succeed: some graders refuse only a call that did)."""
    for rule in spec.prohibited:
        if rule.tool not in spec.tools:  # a tool the agent is not offered cannot be called (nor checked against)
            continue
        same = next((s.args for s in spec.solution if isinstance(s, ToolStep) and s.tool == rule.tool), {})
        pinned = {k: (re.sub(r"[*?\[\]]", "", v) if isinstance(v, str) else v) for k, v in (rule.args or {}).items()}
        args = {**same, **pinned}
        steps = list(spec.solution)
        at = next((i for i, s in enumerate(steps) if isinstance(s, AnswerStep)), len(steps))
        return [*steps[:at], ToolStep(tool=rule.tool, args=args), *steps[at:]]
    return None


PERTURBATIONS: dict[str, Callable[[TaskSpec], Steps | None]] = {
    "reads_skipped": reads_skipped,
    "partial": partial,
    "negated": negated,
    "wrong_value": wrong_value,
    "prohibited": prohibited,
}
"""Name → the perturbed steps of a task's oracle, or None where the oracle has nothing to perturb that way."""


def perturbed(spec: TaskSpec) -> dict[str, Steps]:
    return {name: steps for name, make in PERTURBATIONS.items() if (steps := make(spec)) is not None}
