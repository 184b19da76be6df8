"""TaskSpec rules for group checks and `requires`: ids unique across the spec, requires naming top-level checks
without cycles, groups within the caps; and specs without them keep their JSON."""

from __future__ import annotations

import pytest

from coworkenv.caps import CAPS
from coworkenv.spec import TaskSpec
from tests.spec.test_task import CONTRACT_EXAMPLE, error_of, mutated

FORWARDED, ARCHIVED, UNTOUCHED = CONTRACT_EXAMPLE["checks"]


def group(kind: str, *members: dict, gid: str = "both", **fields) -> dict:
    return {"id": gid, "kind": kind, "checks": list(members), **fields}


@pytest.mark.parametrize(
    ("checks", "needle"),
    [
        ([FORWARDED, {**ARCHIVED, "requires": ["sent"]}], "check 'archived' requires 'sent': no such check"),
        ([FORWARDED, {**ARCHIVED, "requires": ["archived"]}], "check 'archived' requires itself"),
        (
            [
                {**FORWARDED, "requires": ["archived"]},
                {**ARCHIVED, "requires": ["calendar-untouched"]},
                {**UNTOUCHED, "requires": ["forwarded"]},
            ],
            "requires form a cycle: forwarded → archived → calendar-untouched → forwarded",
        ),
        (
            [{**FORWARDED, "requires": ["archived"]}, {**ARCHIVED, "requires": ["forwarded"]}],
            "requires form a cycle: forwarded → archived → forwarded",
        ),
        (
            [group("all_of", FORWARDED, ARCHIVED), {**UNTOUCHED, "requires": ["archived"]}],
            "requires 'archived': a check nested in a group (requires names top-level checks)",
        ),
        (
            [group("all_of", FORWARDED, ARCHIVED), ARCHIVED],
            "check ids must be unique across the spec, group members included (archived repeated)",
        ),
        ([group("any_of", FORWARDED, group("all_of", ARCHIVED, gid="forwarded"))], "(forwarded repeated)"),
        ([group("at_least", FORWARDED, ARCHIVED, k=3)], "k = 3 is more than its 2 nested check(s)"),
        ([group("at_least", FORWARDED, ARCHIVED, k=0)], "greater than or equal to 1"),
        ([group("all_of")], "at least 1 item"),
        (
            [group("all_of", {**FORWARDED, "requires": ["calendar-untouched"]}), UNTOUCHED],
            "`requires` names top-level checks; put it on the group 'both'",
        ),
    ],
)
def test_invalid_groups_and_requires_are_refused_clearly(checks, needle):
    assert needle in error_of(mutated(checks=checks))


def test_a_valid_spec_with_groups_and_requires_round_trips():
    checks = [FORWARDED, group("at_least", ARCHIVED, UNTOUCHED, k=1, requires=["forwarded"])]
    spec = TaskSpec.model_validate(mutated(checks=checks))
    assert TaskSpec.model_validate_json(spec.to_json()) == spec
    assert spec.checks[1].requires == ["forwarded"] and spec.checks[1].checks[0].id == "archived"


def test_specs_without_requires_keep_their_json():
    # `requires` is left out when empty: every spec written before it existed keeps its hash
    spec = TaskSpec.model_validate(CONTRACT_EXAMPLE)
    assert '"requires"' not in spec.to_json()
    assert '"requires":["forwarded"]' in TaskSpec.model_validate(mutated(checks__1__requires=["forwarded"])).to_json()


def test_members_count_against_the_checks_cap():
    members = [{"id": f"c{i}", "kind": "tool_called", "tool": "mail_send"} for i in range(CAPS.checks)]
    assert f"are more than {CAPS.checks}" in error_of(mutated(checks=[group("any_of", *members)]))


def test_the_json_schema_describes_groups_recursively():
    schema = TaskSpec.model_json_schema()
    all_of = schema["$defs"]["AllOf"]
    assert set(all_of["required"]) >= {"id", "kind", "checks"}
    assert "requires" in schema["$defs"]["MailSent"]["properties"]
