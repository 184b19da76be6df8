from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict


class Prompt(BaseModel):
    text: str


class TaskDefinition(BaseModel):
    model_config = ConfigDict(extra="allow")

    task_id: str
    prompt: Prompt

    @classmethod
    def from_yaml(cls, path: str | Path) -> TaskDefinition:
        data: Any = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
        return cls.model_validate(data)
