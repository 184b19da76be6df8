"""Play a trajectory and grade it: the one helper the consistency gate, the validation battery, the repairers and
the rollouts use to run a task's oracle, a list of solution steps, nothing at all, or an agent's policy."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

from coworkenv.episode.evidence import Evidence
from coworkenv.episode.runner import Policy, played
from coworkenv.episode.scripted import NullPolicy, ScriptedPolicy
from coworkenv.episode.session import EpisodeSession
from coworkenv.episode.trajectory import Trajectory
from coworkenv.grading.score import Grade, grade
from coworkenv.spec.task import AnswerStep, SolutionStep, TaskSpec
from coworkenv.workspace.audit import AuditEntry

ANSWER_ONLY_TEXT = "Done."
"""What an agent that does no work answers: the battery's `answer_only_fails` and the repairers play it."""


@dataclass(frozen=True)
class Run:
    session: EpisodeSession = field(repr=False)
    evidence: Evidence
    grade: Grade

    @cached_property
    def trajectory(self) -> Trajectory:
        """Validated on first read: most runs (the battery's, the repairers') are only graded."""
        return self.session.trajectory()

    @property
    def tool_errors(self) -> list[AuditEntry]:
        """Calls that failed for a reason of the task's own making (injected faults excluded)."""
        return [c for c in self.evidence.calls if not c.ok and not c.fault]

    @property
    def faults(self) -> int:
        """Calls that failed with an injected fault."""
        return sum(1 for c in self.evidence.calls if c.fault)


def play(spec: TaskSpec, steps: Sequence[SolutionStep] | None = None, *, policy: Policy | None = None) -> Run:
    """Play `policy` (default: `steps` played like the oracle, retrying injected faults; the task's own solution when
    there are none) in a live episode and grade it. Agents of the layers above hand in their policy
    (`play(spec, policy=make_policy("random", spec))`): grading does not know them."""
    session = played(spec, policy or ScriptedPolicy(spec, steps=steps))
    evidence = session.evidence()
    return Run(session, evidence, grade(spec, evidence))


def play_null(spec: TaskSpec) -> Run:
    """No tool call, an empty answer: what the consistency gate requires to score 0."""
    return play(spec, policy=NullPolicy(spec))


def play_answer_only(spec: TaskSpec) -> Run:
    """No tool call, only the answer "Done.": what doing nothing but claiming success earns."""
    return play(spec, [AnswerStep(answer=ANSWER_ONLY_TEXT)])
