"""Task specifications: TaskSpec, checks, prohibited rules, capabilities (pydantic v2, strict)."""

from coworkenv.spec.capabilities import CAPABILITIES, Capability
from coworkenv.spec.checks import CHECK_KINDS, CHECK_MODELS, Check
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
from coworkenv.spec.workspace import COLLECTIONS, SERVICES, WorkspaceSpec

__all__ = [
    "CAPABILITIES", "CHECK_KINDS", "CHECK_MODELS", "COLLECTIONS", "SERVICES", "AnswerStep", "Capability",
    "Check", "Faults", "Meta", "ProhibitedRule", "RevealRule", "SayStep", "SolutionStep", "TaskSpec",
    "ToolStep", "UserSpec", "WorkspaceSpec",
]  # fmt: skip
