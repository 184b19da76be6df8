"""TaskSpec (docs/design/contracts.md, "TaskSpec"; a contract): one self-contained, executable, gradable task."""

from __future__ import annotations

import json
import math
from functools import cached_property
from typing import Annotated, Any, Self

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, model_validator
from pydantic_core import PydanticCustomError, PydanticSerializationError

from coworkenv.canonical import canonical_json, content_hash
from coworkenv.caps import CAPS
from coworkenv.checks import Check, walk
from coworkenv.frozen import EMPTY_DICT, EMPTY_LIST
from coworkenv.spec.capabilities import CAPABILITIES
from coworkenv.workspace.state import WorkspaceSpec
from coworkenv.workspace.tools import TOOLS, tool_schemas


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class RevealRule(Strict):
    when_any: list[Annotated[str, Field(min_length=1)]] = Field(min_length=1)
    """Keywords; the rule fires when an assistant message to the user contains one (case-insensitive)."""
    say: str


class UserSpec(Strict):
    """A scripted simulated user for multi-turn tasks."""

    persona: str = ""
    facts: dict[str, Any] = EMPTY_DICT
    """Facts only the user knows; they must not appear in the instruction."""
    reveal: list[RevealRule] = EMPTY_LIST
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
    args: dict[str, Any] = EMPTY_DICT


class SayStep(Strict):
    say: str = Field(max_length=CAPS.answer_chars)


class AnswerStep(Strict):
    answer: str = Field(max_length=CAPS.answer_chars)


_STEP_TAGS: dict[type, str] = {ToolStep: "tool", SayStep: "say", AnswerStep: "answer"}


def _step_tag(value: Any) -> str | None:
    # called for every step, when a spec is validated and again when it is serialized
    if isinstance(value, dict):
        for key in ("tool", "say", "answer"):
            if key in value:
                return key
        return None
    return _STEP_TAGS.get(type(value))


SolutionStep = Annotated[
    Annotated[ToolStep, Tag("tool")] | Annotated[SayStep, Tag("say")] | Annotated[AnswerStep, Tag("answer")],
    Discriminator(
        _step_tag,
        custom_error_type="solution_step",
        custom_error_message="a solution step has `tool`, `say` or `answer`",
    ),
]


class Meta(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)

    seed: int | None = None
    generator: str = "hand"
    parent: str | None = None


def _over(where: str, what: str, cap: str) -> PydanticCustomError:
    return PydanticCustomError(
        "too_large",
        "{where}: {what} (cap {cap})",
        {"where": where.lstrip(".")[:300] or "spec", "what": what, "cap": cap},
    )


def _plainly_bounded(data: Any) -> bool:
    """True when `data` is certainly within the caps `TaskSpec._bounded` checks, and has no NaN or Infinity.

    Generation validates every spec it builds, so this pass is kept cheap: level by level, exact types first (they
    are nearly all a spec holds), without the paths that only an error message needs (False sends the spec to the
    full walk, which finds and words the problem)."""
    max_depth, max_items, max_chars, max_values = (
        CAPS.json_depth,
        CAPS.collection_items,
        CAPS.string_chars,
        CAPS.json_values,
    )
    level, depth, values = [data], 1, 0
    while level:
        values += len(level)
        if values > max_values:
            return False
        deep = depth > max_depth  # a container on this level is one too deep
        below: list[Any] = []
        extend = below.extend
        for value in level:
            kind = type(value)
            if kind is str:
                if len(value) > max_chars:
                    return False
            elif kind is dict:
                if deep or len(value) > max_items:
                    return False
                extend(value.values())
            elif kind is list:
                if deep or len(value) > max_items:
                    return False
                extend(value)
            elif kind is int or kind is bool or value is None:
                continue
            elif isinstance(value, float):
                if not math.isfinite(value):
                    return False
            elif isinstance(value, dict | list | tuple):  # subclasses, and tuples
                if deep or len(value) > max_items:
                    return False
                extend(value.values() if isinstance(value, dict) else value)
            elif isinstance(value, str) and len(value) > max_chars:
                return False
        level = below
        depth += 1
    return True


def requires_problem(checks: list[Any], every_id: set[str]) -> str | None:
    """What is wrong with the checks' `requires`: an unknown id, a group member, the check itself, or a cycle."""
    top = {c.id: c for c in checks}
    for c in checks:
        for rid in c.requires:
            if rid == c.id:
                return f"check {c.id!r} requires itself"
            if rid not in top:
                where = (
                    "a check nested in a group (requires names top-level checks)"
                    if rid in every_id
                    else "no such check"
                )
                return f"check {c.id!r} requires {rid!r}: {where}"
    state: dict[str, int] = {}  # 1 on the path, 2 done
    for start in top:
        if start in state:
            continue
        state[start] = 1
        stack, path = [(start, iter(top[start].requires))], [start]
        while stack:
            cid, deps = stack[-1]
            nxt = next(deps, None)
            if nxt is None:
                state[cid] = 2
                stack.pop()
                path.pop()
            elif state.get(nxt) == 1:
                cycle = path[path.index(nxt) :] + [nxt]
                return f"requires form a cycle: {' → '.join(cycle)}"
            elif state.get(nxt) is None:
                state[nxt] = 1
                stack.append((nxt, iter(top[nxt].requires)))
                path.append(nxt)
    return None


class TaskSpec(Strict):
    id: str = Field(min_length=1, max_length=200)
    version: int = Field(default=1, ge=1)
    family: str = Field(min_length=1)
    capabilities: list[str] = Field(min_length=1)
    difficulty: int = Field(ge=1, le=5)
    instruction: str = Field(min_length=1, max_length=CAPS.instruction_chars)
    user: UserSpec | None = None
    workspace: WorkspaceSpec = WorkspaceSpec()
    tools: list[str] = Field(min_length=1)
    prohibited: list[ProhibitedRule] = Field(EMPTY_LIST, max_length=CAPS.prohibited_rules)
    faults: Faults = Faults()
    checks: list[Check] = Field(min_length=1, max_length=CAPS.checks)
    solution: list[SolutionStep] = Field(min_length=1, max_length=CAPS.solution_steps)
    meta: Meta = Meta()

    @model_validator(mode="before")
    @classmethod
    def _bounded(cls, data: Any) -> Any:
        """Within the caps (`coworkenv/caps.py`), before anything else looks at it; and no NaN or Infinity (not JSON:
        a spec holding one would differ from its own serialization). One walk, without recursion; a spec that passes
        the quick pass (`_plainly_bounded`) needs no walk that names where a problem is."""
        if _plainly_bounded(data):
            return data
        stack: list[tuple[str, Any, int]] = [("", data, 1)]
        values = 0
        while stack:
            where, value, depth = stack.pop()
            values += 1
            if values > CAPS.json_values:
                raise PydanticCustomError(
                    "too_large",
                    "the spec holds more than {cap} JSON values (cap json_values)",
                    {"cap": CAPS.json_values},
                )
            if isinstance(value, float) and not math.isfinite(value):
                raise ValueError(f"{where.lstrip('.') or 'value'}: {value} is not a finite number")
            if isinstance(value, str) and len(value) > CAPS.string_chars:
                raise _over(
                    where, f"a string of {len(value)} characters is longer than {CAPS.string_chars}", "string_chars"
                )
            if isinstance(value, dict | list | tuple):
                if depth > CAPS.json_depth:
                    raise PydanticCustomError(
                        "too_deep",
                        "{where}: nested deeper than {cap} levels (cap json_depth)",
                        {"where": where.lstrip(".")[:300] or "spec", "cap": CAPS.json_depth},
                    )
                if len(value) > CAPS.collection_items:
                    raise _over(where, f"{len(value)} items are more than {CAPS.collection_items}", "collection_items")
                items = value.items() if isinstance(value, dict) else enumerate(value)
                stack.extend((f"{where}.{k}", v, depth + 1) for k, v in items)
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
        every = list(walk(self.checks))
        if len(every) > CAPS.checks:
            raise _over("checks", f"{len(every)} checks, group members included, are more than {CAPS.checks}", "checks")
        ids = [c.id for c in every]
        if len(set(ids)) != len(ids):
            twice = sorted({i for i in ids if ids.count(i) > 1})
            raise ValueError(
                f"checks: check ids must be unique across the spec, group members included ({', '.join(twice)} repeated)"
            )
        problem = requires_problem(self.checks, set(ids))
        if problem:
            raise ValueError(f"checks: {problem}")
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

    @cached_property
    def tool_schemas(self) -> list[dict[str, Any]]:
        """The allowed tools' schemas, made for this task's workspace (`Tool.schema_for`); shared, never change them."""
        return tool_schemas(self.tools, self.initial_state)

    def to_json(self) -> str:
        """Compact JSON, non-ASCII text as it is. Pydantic's serializer writes it at about twice the speed of
        `json.dumps` on the dumped dict; it refuses text holding a lone surrogate (validation refuses it too, so only
        a spec built without validation has one), which takes the slow path to the same format."""
        try:
            return self.__pydantic_serializer__.to_json(self, by_alias=True).decode()
        except PydanticSerializationError:
            return json.dumps(self.model_dump(mode="json", by_alias=True), ensure_ascii=False, separators=(",", ":"))
