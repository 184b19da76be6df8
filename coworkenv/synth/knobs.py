"""Difficulty 1–5 → concrete knob values. A family reads only the knobs it declares."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class Knobs(BaseModel):
    model_config = ConfigDict(frozen=True)

    effects: int = Field(description="Number of dependent effects the agent must produce.")
    distractors: int = Field(description="Records that look relevant but are not.")
    ambiguity: int = Field(
        description="0: explicit references; 1: indirect (by role, team, date); 2: near-duplicates to tell apart."
    )
    fault_rate: float = Field(description="Share of tool calls failing with 429/500 (robustness families only).")
    rounds: int = Field(description="Facts the agent must obtain from the user (multi-turn families only).")


DIFFICULTY_KNOBS: dict[int, Knobs] = {
    1: Knobs(effects=1, distractors=2, ambiguity=0, fault_rate=0.1, rounds=1),
    2: Knobs(effects=2, distractors=4, ambiguity=0, fault_rate=0.15, rounds=1),
    3: Knobs(effects=3, distractors=6, ambiguity=1, fault_rate=0.2, rounds=2),
    4: Knobs(effects=4, distractors=9, ambiguity=1, fault_rate=0.3, rounds=2),
    5: Knobs(effects=5, distractors=12, ambiguity=2, fault_rate=0.4, rounds=3),
}
