"""The rule-based repairers on group checks and `requires`: a member is fixed or recomputed inside its group, and a
dropped check leaves no dangling `requires`."""

from __future__ import annotations

import copy

from coworkenv.repair.loop import repair_task
from coworkenv.validate.battery import validate_spec
from tests.validate.test_composite import GROUPED, READ, grouped, spec


def repaired(data: dict) -> dict:
    before = copy.deepcopy(data)
    outcome = repair_task(data, rounds=3)
    assert data == before and outcome.valid, outcome.rejection
    assert validate_spec(outcome.spec).valid
    return outcome.spec


def test_a_misspelled_tool_inside_a_group_is_fixed_in_place():
    data = grouped()
    data["checks"][1]["checks"].append({"id": "moved", "kind": "tool_called", "tool": "mail_mvoe"})
    assert not validate_spec(data).valid
    fixed = repaired(data)
    assert fixed["checks"][1]["checks"][2] == {"id": "moved", "kind": "tool_called", "tool": "mail_move"}


def test_a_member_expectation_is_recomputed_from_the_oracle():
    data = grouped()
    data["checks"][1]["checks"].append({"id": "searched-often", "kind": "tool_called", "tool": "mail_search", "min": 3})
    fixed = repaired(data)
    assert fixed["checks"][1]["checks"][2]["min"] == 1 and [c["id"] for c in fixed["checks"]] == [
        c["id"] for c in GROUPED
    ]


def test_an_unfixable_member_is_removed_from_its_group():
    data = grouped()
    data["checks"][1]["checks"].append({"id": "gone", "kind": "file_exists", "path": "nowhere/at-all.txt"})
    fixed = repaired(data)
    assert [m["id"] for m in fixed["checks"][1]["checks"]] == ["archived", "sent"]


def test_a_dropped_check_leaves_no_dangling_requires():
    data = spec(checks=[{**READ, "tool": "mail_teleport"}, *GROUPED[1:]])
    fixed = repaired(data)
    assert "searched" not in [c["id"] for c in fixed["checks"]]
    assert "requires" not in next(c for c in fixed["checks"] if c["id"] == "amount")
