"""The synthesis job (docs/design/pipeline.md, "Pipeline"): its stages declared once, as `SYNTHESIS`, each a module of
this folder (`plan`, `generate`, …; the gate is `release_tables.gate_tables`). `synthesize` runs them in one process;
the `coworkenv_synthesize` DAG (`pipeline.airflow.job_dag`) runs one task per stage (generate and validate mapped
over the shards), `coworkenv generate | validate | …` one each, and the nightly loop runs them in two parts (plan to
build, then gate and publish), all from this declaration. Each stage's function imports its stage module when it
runs, so the DAG processor imports this package without the data stack."""

from __future__ import annotations

import os
from typing import Any

from coworkenv.data.layout import Manifest
from coworkenv.data.root import DataRoot
from coworkenv.llm import LLMConfig
from coworkenv.pipeline.config import SynthesisConfig
from coworkenv.pipeline.job import Job, Stage, StageInputs, gate_stage, release_event
from coworkenv.pipeline.rundir import RunDir, StageHook
from coworkenv.pipeline.summary import counts, gates_summary, published_summary

GATES = ("validated", "rollouts")
"""The Great Expectations suites a synthesis run's tables pass before they are published."""


def _plan(run: RunDir, i: StageInputs) -> list[dict[str, Any]]:
    from coworkenv.pipeline.synthesis.plan import plan_run

    return plan_run(run, i.config)


def _generate(run: RunDir, i: StageInputs, shard: dict[str, Any]) -> dict[str, Any]:
    from coworkenv.pipeline.synthesis.generate import generate_shard

    return generate_shard(run, shard, i.llm, i.progress)


def _validate(run: RunDir, i: StageInputs, shard: int) -> dict[str, Any]:
    from coworkenv.pipeline.synthesis.validate import validate_shard

    return validate_shard(run, shard, i.progress)


def _validate_shards(run: RunDir, generated: list[dict[str, Any]] | None) -> list[int]:
    """The shards generation made (its results); a run resumed at validation: the shards on disk."""
    return [g["shard"] for g in generated] if generated is not None else run.shard_ids()


def _validate_total(run: RunDir) -> int:
    from coworkenv.pipeline.rundir import count_jsonl

    return sum(count_jsonl(run.shard_file("generated", s, "tasks")) for s in run.shard_ids())


def _validate_summary(run: RunDir, results: list[dict[str, Any]]) -> str:
    codes: dict[str, int] = {}
    for r in results:
        for code, n in r["rejections_by_code"].items():
            codes[code] = codes.get(code, 0) + n
    rejected = ", ".join(f"{c} {n}" for c, n in sorted(codes.items(), key=lambda kv: -kv[1]))
    valid, total = sum(r["valid"] for r in results), sum(r["tasks"] for r in results)
    return f"run {run.run_id}: {valid}/{total} task(s) valid" + (f"; rejected for {rejected}" if rejected else "")


def _repair_total(run: RunDir) -> int:
    from coworkenv.pipeline.rundir import validated

    return sum(1 for _, v in validated(run) if not v.valid)


def _repair_summary(run: RunDir, result: dict[str, Any]) -> str:
    rate = result["metrics"].get("rescue_rate", 0.0) if result["metrics"] else 0.0
    return f"run {run.run_id}: {result['repaired']} of {result['invalid']} invalid task(s) repaired (rescue rate {rate:.0%})"


def _repair(run: RunDir, i: StageInputs) -> dict[str, Any]:
    from coworkenv.pipeline.synthesis.repair import repair_run

    return repair_run(run, i.llm, i.progress)


def _rollout(run: RunDir, i: StageInputs) -> dict[str, Any]:
    from coworkenv.pipeline.synthesis.rollout import rollout_run

    return rollout_run(run, i.progress)


def _build(run: RunDir, i: StageInputs) -> dict[str, int]:
    from coworkenv.pipeline.synthesis.build import build_tables

    return build_tables(run)


def _gate(run: RunDir, i: StageInputs) -> dict[str, Any]:
    from coworkenv.pipeline.release_tables import gate_tables

    return gate_tables(run, GATES)


def _publish(run: RunDir, i: StageInputs) -> Manifest:
    from coworkenv.pipeline.synthesis.publish import publish

    return publish(run)


SYNTHESIS = Job(
    "synthesis",
    (
        Stage(
            "plan",
            _plan,
            ("config.json", "plan.json", "shards.json"),
            doc="Validate the settings, then the capability-guided plan, split into shards.",
            final=True,
        ),
        Stage(
            "generate",
            _generate,
            ("generated",),
            shards=lambda run, shards: shards,
            doc="Generate one shard's tasks (procedural families, and the LLM for llm/mixed).",
            endpoint=True,
        ),
        Stage(
            "validate",
            _validate,
            ("validated",),
            shards=_validate_shards,
            doc="Run the validation battery, in the sandbox, on the run's generated tasks.",
            endpoint=True,  # rubric verdicts are asked here and shipped into the sandbox
            summary=_validate_summary,
            total=_validate_total,
            unit="task",
        ),
        Stage(
            "repair",
            _repair,
            ("repaired",),
            doc="Repair the rejected tasks from their battery feedback (rules in the sandbox, then the LLM if any).",
            endpoint=True,
            summary=_repair_summary,
            total=_repair_total,
            unit="task",
        ),
        Stage(
            "rollout",
            _rollout,
            ("rollouts",),
            doc="Roll out the oracle on every valid task, in the sandbox; graded trajectories → rollouts/.",
            endpoint=True,
            summary=lambda run, r: f"run {run.run_id}: {r['trajectories']} trajectories, {r['passed']} passing",
            unit="task",
        ),
        Stage(
            "build",
            _build,
            ("tables",),
            doc="Release tables: tasks, verdicts, repairs, trajectories, SFT and RL rows (staged for the gates).",
            summary=lambda run, rows: f"run {run.run_id}: {counts(rows)}",
        ),
        gate_stage(
            "gate",
            _gate,
            ("quality",),
            doc="Great Expectations gates; a failure stops the run here and nothing is published.",
            summary=gates_summary,
        ),
        Stage(
            "publish",
            _publish,
            (),
            doc="Atomic publication of the release; LATEST flips last.",
            outlets=("coworkenv-task-release",),
            xcom=release_event,
            summary=published_summary,
        ),
    ),
    config=SynthesisConfig,
    dag_id="coworkenv_synthesize",
    recorded=RunDir.config,
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
