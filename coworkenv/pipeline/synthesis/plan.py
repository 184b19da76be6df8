"""Stage plan: the run's config and capability-guided plan, its rows split into shards for generation."""

from __future__ import annotations

import logging
from collections import Counter
from typing import Any

from coworkenv.errors import CoworkEnvError
from coworkenv.fileio import remove_path
from coworkenv.pipeline.config import SynthesisConfig
from coworkenv.pipeline.rundir import RunDir, write_json, write_text
from coworkenv.pipeline.summary import counts
from coworkenv.spec.capabilities import CapabilityProfile
from coworkenv.spec.io import load_model
from coworkenv.synth.generate import check_plan, plan_for
from coworkenv.synth.planner import Plan

log = logging.getLogger(__name__)


def start_run(run: RunDir, config: SynthesisConfig) -> None:
    """Record the run's config (every later stage reads it) and clear what an earlier start of this run left: the
    outputs the synthesis job declares for every stage after the plan."""
    from coworkenv.pipeline.synthesis import SYNTHESIS

    _check_restartable(run, config)
    for output in SYNTHESIS.outputs_after("plan"):
        remove_path(run.file(output))
    run.write_config(config)


def _check_restartable(run: RunDir, config: SynthesisConfig) -> None:
    """A run that published its release starts again only with its own settings (which publish the same release):
    with others, its release id is taken, and the restart would clear the run's work only to fail at publish."""
    from coworkenv.data.layout import release_id_for
    from coworkenv.data.reader import complete_manifest

    release = release_id_for(run.run_id)
    if not run.file("config.json").is_file() or complete_manifest(run.data_root, release) is None:
        return
    if run.config() != config:
        raise CoworkEnvError(
            f"run {run.run_id!r} published release {release} with other settings: a run id publishes one release, "
            "so give another --run-id"
        )


def plan_run(run: RunDir, config: SynthesisConfig, plan: Plan | None = None) -> list[dict[str, Any]]:
    """Start the run with its plan (the given one, else planned from the config and its capability profile) and
    return the shards: plan rows dealt largest first onto the lightest shard."""
    if (
        plan is not None and plan.n != config.n
    ):  # a plan file is input: it may not make more (or fewer) tasks than asked
        raise CoworkEnvError(f"the plan makes {plan.n} task(s) but n is {config.n}; give --n {plan.n} to run it")
    profile = load_model(CapabilityProfile, config.profile) if config.profile else None
    the_plan = check_plan(plan or plan_for(config, profile))
    start_run(run, config)
    write_text(run.file("plan.json"), the_plan.model_dump_json(indent=2) + "\n")
    shards: list[list[dict[str, Any]]] = [[] for _ in range(min(config.shards, len(the_plan.rows)))]
    loads = [0] * len(shards)
    for row in sorted(the_plan.rows, key=lambda r: -r.count):
        i = loads.index(min(loads))
        shards[i].append(row.model_dump())
        loads[i] += row.count
    out = [{"shard": i, "rows": rows, "tasks": loads[i]} for i, rows in enumerate(shards)]
    write_json(run.file("shards.json"), out)
    families = Counter(row.family for row in the_plan.rows for _ in range(row.count))
    log.info(
        "plan: %d tasks (generator %s, seed %d) from %d plan rows%s, in %d shards of %s tasks\n  by family: %s",
        the_plan.n,
        config.generator,
        config.seed,
        len(the_plan.rows),
        f" (profile {config.profile})" if config.profile else "",
        len(out),
        ", ".join(str(n) for n in loads),
        counts(dict(families.most_common())),
    )
    return out
