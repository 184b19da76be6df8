"""Task specifications: TaskSpec, solution steps, prohibited rules, capabilities (pydantic v2, strict).

The TaskSpec is built over the services' state models and tool names (`coworkenv.workspace`) and the check kinds
(`coworkenv.checks`); nothing here runs an episode.
"""

from coworkenv.checks import CHECK_KINDS, CHECK_MODELS, Check
from coworkenv.spec.capabilities import CAPABILITIES, Capability
from coworkenv.spec.task import (
    AnswerStep,
    Faults,
    Meta,
    ProhibitedRule,
    RevealRule,
    SayStep,
    SolutionStep,
    TaskSpec,
    ToolStep,
    UserSpec,
)
from coworkenv.workspace.state import COLLECTIONS, SERVICE_NAMES, WorkspaceSpec

__all__ = [
    "CAPABILITIES",
    "CHECK_KINDS",
    "CHECK_MODELS",
    "COLLECTIONS",
    "SERVICE_NAMES",
    "AnswerStep",
    "Capability",
    "Check",
    "Faults",
    "Meta",
    "ProhibitedRule",
    "RevealRule",
    "SayStep",
    "SolutionStep",
    "TaskSpec",
    "ToolStep",
    "UserSpec",
    "WorkspaceSpec",
]
