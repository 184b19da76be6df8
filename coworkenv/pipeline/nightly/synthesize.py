"""Stages synthesize and gate_tasks: the loop's training tasks, planned from the profile (or uniform), made by the
synthesis job up to its gate in a sub-run, then its gates and its release."""

from __future__ import annotations

from typing import Any

from coworkenv.llm import LLMConfig
from coworkenv.pipeline.config import NightlyConfig, SynthesisConfig
from coworkenv.pipeline.job import StageInputs
from coworkenv.pipeline.nightly.evaluate import endpoint_settings
from coworkenv.pipeline.nightly.run_state import finished, once, sub_run
from coworkenv.pipeline.rundir import RunDir


def synthesize_stage(run: RunDir, config: NightlyConfig, llm: LLMConfig | None = None) -> dict[str, Any]:
    """The training tasks: plan (from the profile, or uniform) → generate → validate → repair → rollout → build."""

    def work() -> dict[str, Any]:
        from coworkenv.pipeline.synthesis import SYNTHESIS

        profile = finished(run, "profile")
        synth = sub_run(run, "synthesize")
        settings = SynthesisConfig(
            n=config.budget,
            seed=config.seed,
            workers=config.workers,
            shards=config.workers,
            runtime=config.runtime,
            profile=profile["profile"] if config.plan == "guided" else None,
            lineage=f"nightly-{config.model_name}",
            **endpoint_settings(config),
        )
        results = SYNTHESIS.results(synth, StageInputs(config=settings, llm=llm), before="gate")  # gates: gate_tasks
        return {"run_id": synth.run_id, "plan": config.plan, "rows": results["build"]}

    return once(run, "synthesize", work)


def gate_tasks_stage(run: RunDir) -> dict[str, Any]:
    """The synthesis run's `validated` and `rollouts` gates, then its release (LATEST moves to it)."""

    def work() -> dict[str, Any]:
        from coworkenv.pipeline.synthesis import SYNTHESIS

        synth = RunDir.open(finished(run, "synthesize")["run_id"], run.data_root)
        manifest = SYNTHESIS.run(synth, StageInputs(), first="gate")
        return {
            "release_id": manifest.release_id,
            "tasks": manifest.row_counts.get("tasks", 0),
            "sft": manifest.row_counts.get("sft", 0),
        }

    return once(run, "gate_tasks", work)
