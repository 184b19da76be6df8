"""What a trigger form suggests for a free-text setting, from what exists when the DAG file is parsed: the published
suites, the registered models, the agent kinds. A config field names its list (`form_section(..., choices="suites")`)
and `pipeline.airflow.params_from` gives the Param those values as `examples`, which Airflow's form shows as a
pick-list under the text box: the user picks one or types another (a suite published after the parse, a model folder
outside the registry). The lists follow the data root as the DAG processor re-parses the file; a data root that cannot
be read gives no suggestions, never a broken DAG."""

from __future__ import annotations

import logging
from collections.abc import Callable

from coworkenv.data.root import DataRoot, Root, open_root
from coworkenv.registry import Registry

log = logging.getLogger(__name__)

MAX_SUGGESTIONS = 30
"""A pick-list longer than this is cut (newest first): a form is not a catalog browser."""

CHOICES: Registry[Callable[[DataRoot], list[str]]] = Registry("form choices")


def _releases(root: DataRoot, *kinds: str) -> list[tuple[str, str]]:
    """(kind, id) of the complete releases of these kinds, newest first: their manifests read once."""
    from coworkenv.data.reader import list_releases

    releases = sorted((m for m in list_releases(root) if m.kind in kinds), key=lambda m: m.created_at, reverse=True)
    return [(m.kind, m.release_id) for m in releases]


@CHOICES.register("suites")
def published_suites(root: DataRoot) -> list[str]:
    """`bench` (the newest benchmark) where there is one, then every benchmark and task release, newest first."""
    from coworkenv.eval.suite import BENCH_REF

    releases = _releases(root, "benchmark", "tasks")
    bench = [BENCH_REF] if any(kind == "benchmark" for kind, _ in releases) else []
    return [*bench, *(release_id for _, release_id in releases)]


@CHOICES.register("task_releases")
def task_releases(root: DataRoot) -> list[str]:
    """Every task release, newest first (what a model may have been trained on)."""
    return [release_id for _, release_id in _releases(root, "tasks")]


@CHOICES.register("model_dirs")
def registered_model_dirs(root: DataRoot) -> list[str]:
    """The checkpoint folder of every registered model version, newest version first."""
    from coworkenv.models.versions import list_models

    entries = sorted(list_models(root), key=lambda e: (e.name, -e.version))
    return [entry.path for entry in entries]


@CHOICES.register("agents")
def agents(root: DataRoot) -> list[str]:
    """The agent kinds that need nothing more, then `hf:<folder>` for every registered model version."""
    from coworkenv.agents import AGENTS

    plain = [kind for kind in AGENTS.names() if kind not in ("hf", "openai")]
    return [*plain, *(f"hf:{path}" for path in registered_model_dirs(root))]


def suggestions(name: str, data_root: Root = None) -> list[str]:
    """The values of list `name` (at most `MAX_SUGGESTIONS`, no repeats); [] where the data root cannot be read."""
    make = CHOICES.get(name)
    try:
        values = make(open_root(data_root))
    except Exception:  # noqa: BLE001 — a form without suggestions beats a DAG that fails to import
        log.warning("no %s suggestions for the trigger form", name, exc_info=True)
        return []
    return list(dict.fromkeys(values))[:MAX_SUGGESTIONS]
