from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from claw_eval.models.trace import DimensionScores, ToolDispatch


class AbstractGrader(ABC):
    @abstractmethod
    def grade(
        self, messages: list[Any], dispatches: list[Any], task: Any, audit_data: Any = None, judge: Any = None
    ) -> DimensionScores: ...

    def compute_robustness(self, dispatches: list[ToolDispatch]) -> float:
        failed = [d for d in dispatches if d.response_status >= 400]
        return 1.0 if not failed else 1.0 - len(failed) / len(dispatches)

    def final_text(self, messages: list[Any]) -> str:
        said = [m.message.text for m in messages if m.message.role == "assistant" and m.message.text]
        return said[-1] if said else ""
