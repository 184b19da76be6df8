"""Each tool declares the capability it exercises when it is registered; whatever reasons about tools by capability
(the capability repairer, the battery) asks the registry, so a new tool cannot be missing from a table."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

import coworkenv.workspace.services  # noqa: F401  (registers every service and tool)
from coworkenv.repair.rules.instruction import _general_capabilities
from coworkenv.spec.capabilities import CAPABILITIES
from coworkenv.spec.task import ToolStep
from coworkenv.workspace.service import SERVICES
from coworkenv.workspace.tools import TOOLS, Args, tool

CHANGES = sorted(n for n, t in TOOLS.items() if t.kind != "read")

OLD_TABLE = set(
    "mail_send mail_reply mail_draft mail_send_draft mail_move mail_label mail_mark_read chat_post calendar_create"
    " calendar_update calendar_delete files_write docs_create docs_update sheets_update sheets_append tickets_update"
    " tickets_tag tickets_create contacts_update".split()
)
"""The hand-kept write-tool table the capability repairer had before tools declared their capability."""


def test_every_tool_declares_a_known_capability() -> None:
    for name, t in TOOLS.items():
        assert t.capability in CAPABILITIES, name
        assert (t.capability == "retrieval") == (t.kind == "read"), name
        if t.kind != "read":
            assert t.capability == SERVICES.get(t.service).writes, name


def test_the_old_table_missed_tools_the_registry_covers() -> None:
    """The reason for the change: six changes (records, file moves, deletes) were in no capability's list."""
    assert set(CHANGES) - OLD_TABLE == {
        "files_delete",
        "files_move",
        "mail_delete",
        "records_create",
        "records_delete",
        "records_update",
    }


@pytest.mark.parametrize("name", CHANGES)
def test_a_task_that_only_changes_through_a_tool_gets_its_capability(name: str) -> None:
    """The repairer infers an emptied capability list from the oracle's tools: every change counts."""
    spec = SimpleNamespace(solution=[ToolStep(tool=name, args={})], checks=[])
    assert _general_capabilities(spec) == [TOOLS.get(name).capability]


def test_reads_count_as_retrieval_after_the_changes() -> None:
    spec = SimpleNamespace(
        solution=[ToolStep(tool="mail_search", args={}), ToolStep(tool="files_move", args={})], checks=[]
    )
    assert _general_capabilities(spec) == ["authoring", "retrieval"]


def test_a_change_on_a_read_only_service_must_declare_its_capability() -> None:
    assert SERVICES.get("web").writes is None

    def web_post(ws: object, args: Args) -> dict:
        """Not a real tool."""
        return {}

    with pytest.raises(ValueError, match="web_post: a write tool of 'web', which declares no capability"):
        tool("write", Args)(web_post)
    assert "web_post" not in TOOLS
