"""The model registry (docs/design/training.md, "Model registry and promotion"): versions of named models under
`<data root>/models/`, each a checkpoint copied in whole with its lineage and evaluations; refs name them.

Refs: `name` (the current version, else the newest), `name:vN` (or `name:N`), `name:current`, `name:latest`.
"""

from __future__ import annotations

import os
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from coworkenv.agents.base import parse_agent
from coworkenv.data.root import DataRoot, Root, open_root
from coworkenv.errors import CoworkEnvError
from coworkenv.fileio import staged
from coworkenv.models import store
from coworkenv.models.entry import ModelEntry, check_name, parse_ref
from coworkenv.models.evals import eval_manifest, eval_record
from coworkenv.models.lineage import check_checkpoint, read_lineage
from coworkenv.models.verify import MODEL_SHA256, weights_digest
from coworkenv.timeutil import format_instant


def _entries(root: DataRoot, name: str) -> list[ModelEntry]:
    current = store.read_current(root, name)
    return [store.read_entry(root, name, v, current) for v in store.versions(root, name)]


def list_models(data_root: Root = None, name: str | None = None) -> list[ModelEntry]:
    """Every registered version (of `name`, if given), by name then version."""
    root = open_root(data_root)
    names = [check_name(name)] if name is not None else store.model_names(root)
    return [entry for n in names for entry in _entries(root, n)]


def get_model(ref: str, data_root: Root = None) -> ModelEntry:
    """The version `ref` names; a one-line error for an unknown name, version or a missing current version."""
    root = open_root(data_root)
    name, which = parse_ref(ref)
    found = store.versions(root, name)
    if not found:
        known = store.model_names(root)
        hint = f" (registered: {', '.join(known[:10])})" if known else " (the registry is empty)"
        raise CoworkEnvError(f"no model named {name!r} under {root.url}{hint}")
    current = store.read_current(root, name)
    if which == "current" and current is None:
        raise CoworkEnvError(f"{name} has no current version yet: promote one (coworkenv models promote {name}:vN)")
    if which is None:
        version = current or found[-1]
    elif which == "current":
        version = current
    elif which == "latest":
        version = found[-1]
    else:
        version = int(which)
    if version not in found:
        raise CoworkEnvError(f"{name} has no version v{version} (versions: v{found[0]}–v{found[-1]})")
    return store.read_entry(root, name, version, current)


def current_model(name: str, data_root: Root = None) -> ModelEntry | None:
    """The version CURRENT names, or None before the first promotion (or for a name never registered)."""
    root = open_root(data_root)
    current = store.read_current(root, check_name(name))
    return store.read_entry(root, name, current, current) if current is not None else None


def _parent_of(root: DataRoot, base_model: str | None, name: str) -> str | None:
    """The registered version the job started from: the one whose folder it is, else one with the same weights (a job
    started from the folder a version was registered from), the name's own newest first."""
    if not base_model or not root.local:
        return None
    base = Path(base_model).resolve()
    entries = list_models(root)
    found = next((e.ref for e in entries if Path(e.path).resolve() == base), None)
    if found is not None or not any(base.glob("*.safetensors")):
        return found
    digest = weights_digest(base)
    same = sorted((e for e in entries if e.weights_sha256 == digest), key=lambda e: (e.name == name, e.version))
    return same[-1].ref if same else None


def register_model(
    checkpoint_dir: str | os.PathLike[str], name: str, *, data_root: Root = None, parent: str | None = None
) -> ModelEntry:
    """Copy a checkpoint in as the name's next version (a candidate: it becomes current only through `promote`). The
    lineage comes from its training.json (or the tiny model's card); the parent is `parent` (a ref) or the registered
    version the job started from (its folder, or the folder it was registered from)."""
    root = open_root(data_root)
    registry = store.writable(root)
    check_name(name)
    checkpoint = Path(checkpoint_dir)
    check_checkpoint(checkpoint)
    if (registry / name).resolve().is_relative_to(checkpoint.resolve()):
        raise CoworkEnvError(f"{checkpoint}: holds the registry itself; give the checkpoint folder")
    lineage = read_lineage(checkpoint)
    parent_ref = get_model(parent, root).ref if parent is not None else _parent_of(root, lineage.base_model, name)
    with store.locked(root, name) as folder:
        version = max(store.versions(root, name), default=0) + 1
        dest = folder / store.version_dir(version)
        entry = ModelEntry(
            name=name,
            version=version,
            path=str(dest),
            parent=parent_ref,
            created_at=format_instant(datetime.now(UTC)),
            weights_sha256=weights_digest(checkpoint),
            **lineage.model_dump(),
        )
        with staged(dest, folder=True) as tmp:
            try:
                shutil.copytree(checkpoint, tmp, dirs_exist_ok=True)
            except (OSError, shutil.Error) as exc:
                raise CoworkEnvError(f"{checkpoint}: cannot copy it into the registry: {exc}") from None
            (tmp / store.ENTRY_FILE).write_text(store.entry_json(entry), encoding="utf-8")
    return entry


def check_evaluated(entry: ModelEntry, config: dict[str, Any]) -> None:
    """An evaluation (its published config) is of `entry` only if it ran an `hf:` agent on a checkpoint with the
    entry's weights: another agent's or another checkpoint's figures would decide its promotion."""
    agent = str(config.get("agent", ""))
    kind, target = parse_agent(agent)
    if kind != "hf" or not target:
        raise CoworkEnvError(
            f"{entry.ref}: the evaluation is of agent {agent!r}, not of a checkpoint; evaluate it with --agent hf:{entry.path}"
        )
    recorded = config.get(MODEL_SHA256)
    if recorded is None:  # published before evaluations recorded the hash: only the entry's own folder will do
        if Path(target).resolve() != Path(entry.path).resolve():
            raise CoworkEnvError(
                f"{entry.ref}: the evaluation of {agent} records no checkpoint hash and is not of {entry.path}"
            )
        return
    expected = entry.weights_sha256 or weights_digest(Path(entry.path))
    if recorded != expected:
        raise CoworkEnvError(f"{entry.ref}: the evaluation is of {agent}, whose weights are not {entry.ref}'s")


def record_eval(ref: str, eval_ref: str, data_root: Root = None) -> ModelEntry:
    """Attach a published evaluation (its release id, or the run id that published it) to the version `ref` names, if
    it is an evaluation of that version (`check_evaluated`); recording the same evaluation again replaces its record."""
    root = open_root(data_root)
    store.writable(root)
    named = get_model(ref, root)
    record = eval_record(root, eval_ref)
    check_evaluated(named, eval_manifest(root, record.release_id).config)
    with store.locked(root, named.name) as folder:
        entry = get_model(named.ref, root)  # again, under the lock: another writer may have changed it
        evals = [e for e in entry.evals if e.release_id != record.release_id] + [record]
        entry = entry.model_copy(update={"evals": evals})
        store.write_entry(folder, entry)
    return entry
