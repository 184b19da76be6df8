"""Trajectories (docs/design/contracts.md, "Scoring", a contract): OpenAI chat messages; grading replays them on a fresh workspace."""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from coworkenv.caps import CAPS
from coworkenv.episode.episode import Episode
from coworkenv.episode.evidence import Evidence
from coworkenv.frozen import EMPTY_DICT
from coworkenv.spec.task import TaskSpec


class FunctionCall(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    arguments: str = "{}"
    """A JSON string, as OpenAI sends it; an object is accepted and serialized."""

    @field_validator("arguments", mode="before")
    @classmethod
    def _serialize(cls, value: Any) -> Any:
        return json.dumps(value) if isinstance(value, dict) else value


class ToolCall(BaseModel):
    model_config = ConfigDict(extra="allow")

    id: str
    type: Literal["function"] = "function"
    function: FunctionCall


class Message(BaseModel):
    model_config = ConfigDict(extra="allow")

    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[dict[str, Any]] | None = None
    tool_calls: list[ToolCall] | None = None
    tool_call_id: str | None = None

    def text(self) -> str:
        if self.content is None:
            return ""
        if isinstance(self.content, str):
            return self.content
        return "".join(part.get("text", "") for part in self.content if isinstance(part, dict))


class Trajectory(BaseModel):
    model_config = ConfigDict(extra="forbid")

    task_id: str = Field(min_length=1)
    messages: list[Message] = Field(max_length=CAPS.trajectory_messages)
    meta: dict[str, Any] = EMPTY_DICT

    @model_validator(mode="after")
    def _bounded(self) -> Trajectory:
        calls = sum(len(m.tool_calls or ()) for m in self.messages)
        if calls > CAPS.trajectory_calls:
            raise ValueError(
                f"messages: {calls} tool calls are more than {CAPS.trajectory_calls} (cap trajectory_calls)"
            )
        return self

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_none=True, exclude_defaults=False)


def replay(spec: TaskSpec, trajectory: Trajectory) -> Evidence:
    """Re-run the assistant's calls against a fresh workspace; recorded tool outputs are ignored.

    Each assistant message's tool calls run in order; a message without tool calls goes to the simulated
    user, except the last assistant message, whose text is the final answer.
    """
    episode = Episode(spec)
    assistant = [m for m in trajectory.messages if m.role == "assistant"]
    for i, message in enumerate(assistant):
        last = i == len(assistant) - 1
        if message.tool_calls and not last:  # the last message's text is the answer
            episode.narrate(message.text())
        for call in message.tool_calls or ():
            episode.step(call.function.name, call.function.arguments)
        if last:
            return episode.finish(message.text())
        if not message.tool_calls:
            episode.message(message.text(), may_end=False)
    return episode.finish("")
