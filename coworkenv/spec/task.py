"""TaskSpec (docs/architecture.md, "TaskSpec"; a contract): one self-contained, executable, gradable task."""

from __future__ import annotations

import json
import math
from functools import cached_property
from typing import Annotated, Any, Self

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, model_validator

from coworkenv.canonical import canonical_json, content_hash
from coworkenv.checks import Check
from coworkenv.spec.capabilities import CAPABILITIES
from coworkenv.workspace.state import WorkspaceSpec
from coworkenv.workspace.tools import TOOLS


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class RevealRule(Strict):
    when_any: list[Annotated[str, Field(min_length=1)]] = Field(min_length=1)
    """Keywords; the rule fires when an assistant message to the user contains one (case-insensitive)."""
    say: str


class UserSpec(Strict):
    """A scripted simulated user for multi-turn tasks."""

    persona: str = ""
    facts: dict[str, Any] = {}
    """Facts only the user knows; they must not appear in the instruction."""
    reveal: list[RevealRule] = []
    max_rounds: int = Field(default=3, ge=0)


class ProhibitedRule(Strict):
    tool: str
    args: dict[str, Any] | None = None
    """Values match exactly, or as case-insensitive shell globs for strings; a list argument matches if any element does."""
    reason: str = ""


class Faults(Strict):
    rate: float = Field(default=0.0, ge=0.0, le=1.0)
    seed: int = 0


class ToolStep(Strict):
    tool: str
    args: dict[str, Any] = {}


class SayStep(Strict):
    say: str


class AnswerStep(Strict):
    answer: str


def _step_tag(value: Any) -> str | None:
    if isinstance(value, dict):
        for key in ("tool", "say", "answer"):
            if key in value:
                return key
        return None
    return {ToolStep: "tool", SayStep: "say", AnswerStep: "answer"}.get(type(value))


SolutionStep = Annotated[
    Annotated[ToolStep, Tag("tool")] | Annotated[SayStep, Tag("say")] | Annotated[AnswerStep, Tag("answer")],
    Discriminator(_step_tag, custom_error_type="solution_step", custom_error_message="a solution step has `tool`, `say` or `answer`"),
]


class Meta(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)

    seed: int | None = None
    generator: str = "hand"
    parent: str | None = None


class TaskSpec(Strict):
    id: str = Field(min_length=1, max_length=200)
    version: int = Field(default=1, ge=1)
    family: str = Field(min_length=1)
    capabilities: list[str] = Field(min_length=1)
    difficulty: int = Field(ge=1, le=5)
    instruction: str = Field(min_length=1)
    user: UserSpec | None = None
    workspace: WorkspaceSpec = WorkspaceSpec()
    tools: list[str] = Field(min_length=1)
    prohibited: list[ProhibitedRule] = []
    faults: Faults = Faults()
    checks: list[Check] = Field(min_length=1)
    solution: list[SolutionStep] = Field(min_length=1)
    meta: Meta = Meta()

    @model_validator(mode="before")
    @classmethod
    def _finite_numbers(cls, data: Any) -> Any:
        """NaN and Infinity are not JSON: a spec holding one would differ from its own serialization."""
        stack = [("", data)]
        while stack:
            where, value = stack.pop()
            if isinstance(value, float) and not math.isfinite(value):
                raise ValueError(f"{where.lstrip('.') or 'value'}: {value} is not a finite number")
            if isinstance(value, dict):
                stack.extend((f"{where}.{k}", v) for k, v in value.items())
            elif isinstance(value, list | tuple):
                stack.extend((f"{where}.{i}", v) for i, v in enumerate(value))
        return data

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        for i, name in enumerate(self.capabilities):
            if name not in CAPABILITIES:
                raise ValueError(f"capabilities.{i}: {CAPABILITIES.unknown_message(name)}")
        for i, name in enumerate(self.tools):
            if name not in TOOLS:
                raise ValueError(f"tools.{i}: {TOOLS.unknown_message(name)}")
        if len(set(self.tools)) != len(self.tools):
            raise ValueError("tools: a tool is listed twice")
        ids = [c.id for c in self.checks]
        if len(set(ids)) != len(ids):
            raise ValueError("checks: check ids must be unique")
        answers = [i for i, s in enumerate(self.solution) if isinstance(s, AnswerStep)]
        if answers != [len(self.solution) - 1]:
            raise ValueError("solution: must end with exactly one `answer` step")
        return self

    @cached_property
    def initial_state_json(self) -> str:
        """Canonical JSON of the initial workspace; every episode starts from a fresh parse of it."""
        return canonical_json(self.workspace.model_dump(mode="json", by_alias=True))

    @cached_property
    def initial_state(self) -> dict[str, Any]:
        """The initial workspace as plain data; shared, so never mutate it (episodes parse their own copy)."""
        return json.loads(self.initial_state_json)

    @cached_property
    def initial_state_hash(self) -> str:
        return content_hash(self.initial_state_json)

    def to_json(self) -> str:
        return json.dumps(self.model_dump(mode="json", by_alias=True), ensure_ascii=False)
