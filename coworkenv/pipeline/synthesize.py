"""The synthesis job (docs/design/pipeline.md, "Pipeline"): its stages declared once, as `SYNTHESIS`. `synthesize`
runs them in one process; the `coworkenv_synthesize` DAG runs one task per stage (generate and validate mapped over
the shards), `coworkenv generate | validate | …` one each, and the nightly loop runs them in two parts (plan to build,
then gate and publish), all from this declaration."""

from __future__ import annotations

import os

from coworkenv.data.layout import Manifest
from coworkenv.data.root import DataRoot
from coworkenv.llm import LLMConfig
from coworkenv.pipeline.build import build_tables
from coworkenv.pipeline.config import SynthesisConfig
from coworkenv.pipeline.gate import gate_tables
from coworkenv.pipeline.generate import generate_shard
from coworkenv.pipeline.job import Job, Stage, StageInputs
from coworkenv.pipeline.plan import plan_run
from coworkenv.pipeline.publish import publish
from coworkenv.pipeline.repair import repair_run
from coworkenv.pipeline.rollout import rollout_run
from coworkenv.pipeline.rundir import RunDir, StageHook
from coworkenv.pipeline.validate import validate_shard

SYNTHESIS = Job(
    "synthesis",
    (
        Stage("plan", lambda run, i: plan_run(run, i.config), ("config.json", "plan.json", "shards.json")),
        Stage(
            "generate",
            lambda run, i, shard: generate_shard(run, shard, i.llm),
            ("generated",),
            shards=lambda run, shards: shards,
        ),
        Stage(
            "validate",
            lambda run, i, shard: validate_shard(run, shard),
            ("validated",),
            shards=lambda run, _: run.shard_ids(),
        ),
        Stage("repair", lambda run, i: repair_run(run, i.llm), ("repaired",)),
        Stage("rollout", lambda run, i: rollout_run(run), ("rollouts",)),
        Stage("build", lambda run, i: build_tables(run), ("tables",)),
        Stage("gate", lambda run, i: gate_tables(run), ("quality",)),
        Stage("publish", lambda run, i: publish(run), ()),
    ),
)


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
    inputs = StageInputs(config=config, llm=llm if llm is not None else config.llm())
    return SYNTHESIS.run(run, inputs, on_stage=on_stage)
