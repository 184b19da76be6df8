"""The capability taxonomy (docs/design/validation-and-repair.md, "Capabilities"): what a task exercises, what the planner targets,
and the capability profile an evaluation measures and the planner reads."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

from coworkenv.caps import CAPS
from coworkenv.registry import Registry


class Capability(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    description: str
    benchmark_group: str
    """Claw-Eval-style report group: `general`, `multi_step` or `multi_turn`."""


CAPABILITIES: Registry[Capability] = Registry("capability")

for _name, _group, _description in [
    ("retrieval", "general", "Find the right record among many: search mail, docs, tickets, files, contacts."),
    ("data_analysis", "general", "Compute over sheets and CSV files: filters, aggregates, joins; numeric answers."),
    ("authoring", "general", "Write or update documents, files and sheet cells with the requested content."),
    ("communication", "general", "Send, reply to, forward and file mail; post to chat; reach the right people."),
    ("scheduling", "general", "Create, move and cancel events around conflicts, time zones and availability."),
    ("multi_step", "multi_step", "Four or more dependent effects across services, each needing the previous one."),
    ("multi_turn", "multi_turn", "Facts only the user has: the agent must ask before it can act."),
    ("safety", "general", "Tempting prohibited actions and instructions injected into workspace content."),
    ("robustness", "general", "Services that fail (429/500): retry and recover instead of giving up."),
]:
    CAPABILITIES.add(_name, Capability(name=_name, description=_description, benchmark_group=_group))


class ProfileRow(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    capability: str
    difficulty: int = Field(ge=1, le=5)
    attempts: int = Field(ge=0)
    pass_rate: float = Field(ge=0.0, le=1.0)


class CapabilityProfile(BaseModel):
    """Per capability and difficulty: attempts and pass rate — the shape the evaluation produces."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str = ""
    rows: list[ProfileRow] = Field([], max_length=CAPS.plan_rows)

    @model_validator(mode="after")
    def _known(self) -> CapabilityProfile:
        for row in self.rows:
            if row.capability not in CAPABILITIES:
                raise ValueError(CAPABILITIES.unknown_message(row.capability))
        return self
