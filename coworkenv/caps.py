"""Caps on every size and count that comes from input (a spec, a plan, a file of them), in one place.

Generous for anything a real task or plan needs, finite so that nothing an LLM (or an attacker) writes can make a
check, a battery run or a plan take unbounded time or memory. A spec over a cap is refused by the schema with an
error naming the field and the cap (error types `too_large`, `too_deep`, pydantic's `too_long`); a plan over one is
refused before any work, and so is a trajectory over one (`Trajectory`). docs/design/contracts.md ("Caps") lists them.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class InputCaps(BaseModel):
    """The caps; every field's description says what it bounds."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    spec_chars: int = Field(
        5_000_000, description="Characters of one TaskSpec JSON text; a longer one is refused before it is parsed."
    )
    json_depth: int = Field(
        32, description="Nesting depth of objects and lists anywhere in a spec (a real spec needs about 8)."
    )
    file_json_depth: int = Field(
        64,
        description="Nesting depth of any JSON file a command reads (plan, profile, trajectory, feedback): deeper overflows what walks it.",
    )
    json_values: int = Field(
        500_000, description="JSON values (objects, lists, strings, numbers, …) in one spec, all together."
    )
    collection_items: int = Field(
        10_000, description="Items of any one list or object in a spec: files, messages, sheet rows, a row's cells, …"
    )
    string_chars: int = Field(
        1_000_000, description="Characters of any one string in a spec (a file's content included: the write limit)."
    )
    instruction_chars: int = Field(20_000, description="Characters of a task's instruction.")
    answer_chars: int = Field(20_000, description="Characters of the oracle's final answer (and of each `say` step).")
    checks: int = Field(200, description="Checks per task, the members of group checks included.")
    check_depth: int = Field(
        4, description="Nesting depth of group checks (`all_of`, `any_of`, `at_least`) inside one another."
    )
    solution_steps: int = Field(500, description="Steps of a task's oracle solution.")
    prohibited_rules: int = Field(200, description="Prohibited rules per task.")
    regex_chars: int = Field(1_000, description="Characters of a check's regex.")
    regex_memory_bytes: int = Field(8 << 20, description="Memory RE2 may use for one compiled regex (its DFA cache).")
    plan_rows: int = Field(
        10_000, description="Rows of a generation plan, and of a capability profile it is planned from."
    )
    trajectory_messages: int = Field(10_000, description="Messages of one trajectory (`grade`, rollouts).")
    trajectory_calls: int = Field(
        10_000, description="Tool calls of one trajectory, all messages together (each is replayed)."
    )
    tasks_per_run: int = Field(
        1_000_000, description="Tasks one run may plan (`n`) and one plan row may ask for (`count`)."
    )


CAPS = InputCaps()
"""The caps every layer reads."""
