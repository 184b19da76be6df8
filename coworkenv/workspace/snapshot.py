"""Canonical snapshots, content hashes and structured diffs of workspace state."""

from __future__ import annotations

from typing import Any

from coworkenv.spec.workspace import COLLECTIONS, SERVICES


def _diff_records(before: list[dict], after: list[dict]) -> dict[str, Any]:
    old = {r["id"]: r for r in before}
    new = {r["id"]: r for r in after}
    changed = {}
    for rid in old.keys() & new.keys():
        if old[rid] != new[rid]:
            fields = sorted(k for k in old[rid].keys() | new[rid].keys() if old[rid].get(k) != new[rid].get(k))
            changed[rid] = {k: [old[rid].get(k), new[rid].get(k)] for k in fields}
    return {
        "added": sorted(new.keys() - old.keys()),
        "removed": sorted(old.keys() - new.keys()),
        "changed": dict(sorted(changed.items())),
    }


def _diff_files(before: dict[str, str], after: dict[str, str]) -> dict[str, Any]:
    return {
        "added": sorted(after.keys() - before.keys()),
        "removed": sorted(before.keys() - after.keys()),
        "changed": sorted(p for p in before.keys() & after.keys() if before[p] != after[p]),
    }


def _diff_sheets(before: dict[str, dict], after: dict[str, dict]) -> dict[str, Any]:
    changed = {}
    for name in sorted(before.keys() & after.keys()):
        old, new = before[name], after[name]
        if old == new:
            continue
        columns = new["columns"]
        cells = [
            [r, columns[c], old["rows"][r][c], new["rows"][r][c]]
            for r in range(min(len(old["rows"]), len(new["rows"])))
            for c in range(len(columns))
            if old["rows"][r][c] != new["rows"][r][c]
        ]
        changed[name] = {"cells": cells, "rows_added": new["rows"][len(old["rows"]) :]}
    return {"added": sorted(after.keys() - before.keys()), "removed": sorted(before.keys() - after.keys()), "changed": changed}


def _diff_chat(before: dict[str, list], after: dict[str, list]) -> dict[str, Any]:
    posted = {ch: msgs[len(before.get(ch, [])) :] for ch, msgs in sorted(after.items()) if msgs != before.get(ch, [])}
    return {"added": sorted(after.keys() - before.keys()), "removed": sorted(before.keys() - after.keys()), "posted": posted}


def diff_states(before: dict[str, Any], after: dict[str, Any], services: tuple[str, ...] = SERVICES) -> dict[str, Any]:
    """Per service, what was added, removed and changed; services without changes are left out."""
    out: dict[str, Any] = {}
    for service in services:
        old, new = before[service], after[service]
        if old == new:
            continue
        if service == "files":
            out[service] = _diff_files(old, new)
        elif service == "sheets":
            out[service] = _diff_sheets(old, new)
        elif service == "chat":
            out[service] = _diff_chat(old["channels"], new["channels"])
        else:
            key = COLLECTIONS[service]
            out[service] = _diff_records(old[key], new[key])
    return out
