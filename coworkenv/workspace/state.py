"""The typed initial state of a workspace (`TaskSpec.workspace`): the clock, the agent's identity, and one field
per registered service, typed by that service's state model. Every service is optional; absent means empty.

The runtime workspace holds exactly the JSON dump of this model.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, create_model

from coworkenv.workspace import services as _services  # noqa: F401  (registers every service)
from coworkenv.workspace.record_types import Identity, Instant, Record
from coworkenv.workspace.service import SERVICES


class WorkspaceBase(Record):
    now: Instant = "2026-12-01T09:00:00Z"
    """The workspace clock: records the agent creates are stamped `now` plus one second per call."""
    me: Identity = Identity()


def _service_field(name: str) -> tuple[Any, Any]:
    service = SERVICES.get(name)
    return service.state, Field(default_factory=service.default, description=service.description)


WorkspaceSpec = create_model(
    "WorkspaceSpec",
    __base__=WorkspaceBase,
    __doc__=__doc__.split("\n\n")[0],
    **{name: _service_field(name) for name in SERVICES},
)

SERVICE_NAMES: tuple[str, ...] = tuple(SERVICES.names())
COLLECTIONS: dict[str, str] = {s.name: s.collection for _, s in SERVICES.items() if s.collection}
"""Service → its one list of id'd records, for services that keep exactly one."""
RECORD_SERVICES: tuple[str, ...] = tuple(name for name, s in SERVICES.items() if s.keeps_records)
"""Services with id'd records (one collection, or those the task declares): what `record` checks may name."""
