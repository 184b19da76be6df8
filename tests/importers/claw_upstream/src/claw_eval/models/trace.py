from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from claw_eval.models.message import Message


class TraceMessage(BaseModel):
    trace_id: str
    message: Message


class ToolDispatch(BaseModel):
    trace_id: str
    tool_use_id: str
    tool_name: str
    endpoint_url: str = ""
    request_body: dict[str, Any] = Field(default_factory=dict)
    response_status: int = 200
    response_body: Any = None


class DimensionScores(BaseModel):
    completion: float = 0.0
    robustness: float = 0.0
    safety: float = 1.0
