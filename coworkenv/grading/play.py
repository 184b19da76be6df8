"""Play a trajectory and grade it: the one helper the consistency gate, the validation battery, the repairers and
the rollouts use to run a task's oracle, a list of solution steps, or a named agent."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

from coworkenv.agents.registry import make_policy
from coworkenv.episode.evidence import Evidence
from coworkenv.episode.runner import played
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


def play(spec: TaskSpec, steps: Sequence[SolutionStep] | None = None, *, agent: str = "oracle") -> Run:
    """Run `steps` (played like the oracle, retrying injected faults), else the named agent, in a live episode; grade it."""
    policy = make_policy("oracle", spec, steps=steps) if steps is not None else make_policy(agent, spec)
    session = played(spec, policy)
    evidence = session.evidence()
    return Run(session, evidence, grade(spec, evidence))


def play_answer_only(spec: TaskSpec) -> Run:
    """No tool call, only the answer "Done.": what doing nothing but claiming success earns."""
    return play(spec, [AnswerStep(answer=ANSWER_ONLY_TEXT)])
