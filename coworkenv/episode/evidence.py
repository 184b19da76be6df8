"""Evidence: everything grading may look at, produced by an episode (live or replayed)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

from coworkenv.canonical import canonical_json, content_hash
from coworkenv.workspace.audit import AuditEntry


@dataclass(frozen=True)
class Evidence:
    """Plain frozen dataclass rather than a pydantic model: built once per episode on the hot path."""

    task_id: str
    calls: tuple[AuditEntry, ...]
    """The audit log: every tool call, rejected and fault-injected ones included."""
    answer: str
    says: tuple[str, ...]
    """Assistant messages to the simulated user (the final answer excluded)."""
    user_rounds: int
    initial_state: dict[str, Any]
    final_state: dict[str, Any]
    final_hash: str
    diff: dict[str, Any]

    @property
    def empty(self) -> bool:
        """No tool call, no message to the user, no answer: nothing was attempted."""
        return not self.calls and not self.says and not self.answer.strip()

    @cached_property
    def evidence_hash(self) -> str:
        """Identifies the whole outcome; two runs of a deterministic task give the same hash."""
        return content_hash(
            canonical_json(
                {
                    "calls": [c.to_dict() for c in self.calls],
                    "answer": self.answer,
                    "says": list(self.says),
                    "user_rounds": self.user_rounds,
                    "final_hash": self.final_hash,
                }
            )
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "task_id": self.task_id,
            "calls": [c.to_dict() for c in self.calls],
            "answer": self.answer,
            "says": list(self.says),
            "user_rounds": self.user_rounds,
            "final_hash": self.final_hash,
            "diff": self.diff,
            "evidence_hash": self.evidence_hash,
        }
