"""Structured diffs of workspace state, service by service (each service declares how its section is diffed)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from coworkenv.workspace.service import SERVICES


def diff_states(before: dict[str, Any], after: dict[str, Any], services: Iterable[str] | None = None) -> dict[str, Any]:
    """Per service, what was added, removed and changed; services without changes are left out."""
    out: dict[str, Any] = {}
    for name in SERVICES.names() if services is None else services:
        old, new = before[name], after[name]
        if old != new:
            out[name] = SERVICES.get(name).diff_sections(old, new)
    return out
