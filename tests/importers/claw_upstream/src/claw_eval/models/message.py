from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from claw_eval.models.content import ContentBlock, TextBlock


class Message(BaseModel):
    role: Literal["user", "assistant", "system"]
    content: list[ContentBlock] = Field(default_factory=list)

    @property
    def text(self) -> str:
        return "".join(b.text for b in self.content if isinstance(b, TextBlock))
