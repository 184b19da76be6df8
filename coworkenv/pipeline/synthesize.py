"""The whole synthesis run in one process, stage by stage, exactly as the `coworkenv_synthesize` DAG runs it (the DAG
maps the generate and validate stages over the shards; here they run one after the other)."""

from __future__ import annotations

import os

from coworkenv.data.layout import Manifest
from coworkenv.data.root import DataRoot
from coworkenv.llm import LLMConfig
from coworkenv.pipeline.build import build_tables
from coworkenv.pipeline.config import SynthesisConfig
from coworkenv.pipeline.gate import gate_tables
from coworkenv.pipeline.generate import generate_shard
from coworkenv.pipeline.plan import plan_run
from coworkenv.pipeline.publish import publish
from coworkenv.pipeline.repair import repair_run
from coworkenv.pipeline.rollout import rollout_run
from coworkenv.pipeline.rundir import RunDir, StageHook, stage_reporter
from coworkenv.pipeline.validate import validate_shard


def synthesize(
    config: SynthesisConfig,
    run_id: str,
    data_root: str | os.PathLike[str] | DataRoot | None = None,
    *,
    llm: LLMConfig | None = None,
    on_stage: StageHook | None = None,
) -> Manifest:
    """plan → generate → validate → repair → rollout → build → gate → publish; returns the published release's manifest."""
    run = RunDir.open(run_id, data_root)
    llm = llm if llm is not None else config.llm()
    done = stage_reporter(on_stage)
    shards = done("plan", plan_run(run, config))
    for shard in shards:
        done("generate", generate_shard(run, shard, llm))
    for shard in run.shard_ids():
        done("validate", validate_shard(run, shard))
    done("repair", repair_run(run, llm))
    done("rollout", rollout_run(run))
    done("build", build_tables(run))
    done("gate", gate_tables(run))
    return done("publish", publish(run))
