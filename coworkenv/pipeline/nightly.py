"""The nightly loop (docs/design/training.md, "Nightly loop"): one turn of synthesize → train → evaluate → promote,
stage by stage over the run directory, each stage a plain function that records its result in `nightly/state.json`.
A stage already recorded there is not run again, so a run that died mid-way resumes where it stopped (the
synthesis and evaluation runs it starts resume the same way, under sub-run ids `<run id>.<stage>`).

```
nightly/config.json      the run's NightlyConfig
nightly/state.json       each finished stage's result, in order
nightly/profile.json     the capability profile the plan was made from (the current model's, on the held-out suite)
nightly/base/            the tiny model, when the registry starts from it
nightly/own_sft.parquet  the current model's own successes on the training tasks (rejection sampling)
nightly/checkpoints/     sft/, and grpo/, gdpo/ or dpo/ after it
nightly/decision.json    the promotion decision
nightly/report/          the candidate against the current model: report.html, comparison.json, plots
nightly/next_profile.json  the profile the next loop plans from (the model that is current after the decision)
```
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from coworkenv.data.root import DataRoot
from coworkenv.errors import CoworkEnvError
from coworkenv.fileio import outermost_missing, remove_created
from coworkenv.llm import LLMConfig
from coworkenv.pipeline.config import NightlyConfig, SynthesisConfig, nightly_config
from coworkenv.pipeline.job import Job, Stage, StageInputs, gate_stage
from coworkenv.pipeline.rundir import RunDir, StageHook, write_json
from coworkenv.progress import Bars
from coworkenv.train.bases import BASES

if TYPE_CHECKING:
    from coworkenv.models import ModelEntry

from coworkenv.pipeline.nightly_evaluations import (
    endpoint_settings,
    eval_config,
    evaluate_all,
    evaluate_stage,
    gate_eval_stage,
    gate_rollouts_stage,
    rollouts_stage,
)
from coworkenv.pipeline.nightly_state import finished, nightly_file, once, read_config, read_state, start, sub_run
from coworkenv.pipeline.nightly_train import train_stage

__all__ = [
    "NIGHTLY",
    "STAGES",
    "nightly",
    "nightly_file",
    "read_config",
    "read_state",
    "run_stage",
    "start",
    "train_stage",
]

log = logging.getLogger(__name__)

# --- helpers over the registry and evaluations ---------------------------------------------------------------------


def _profile_of(eval_ref: str, model: str, dest: Path, data_root: DataRoot) -> dict[str, Any]:
    """Write the capability profile of an evaluation (what the planner reads) and return its weakest capabilities."""
    from coworkenv.eval.profile import capability_profile
    from coworkenv.pipeline.evaluate import eval_rows
    from coworkenv.pipeline.rundir import write_text

    profile = capability_profile(eval_rows(eval_ref, data_root), model=model)
    write_text(dest, profile.model_dump_json(indent=2) + "\n")
    by_cap: dict[str, list[float]] = {}
    for row in profile.rows:
        by_cap.setdefault(row.capability, []).append(row.pass_rate)
    weakest = sorted(by_cap, key=lambda c: sum(by_cap[c]) / len(by_cap[c]))[:3]
    return {"profile": str(dest), "weakest": weakest}


# --- stages --------------------------------------------------------------------------------------------------------


def profile_stage(
    run: RunDir, config: NightlyConfig, llm: LLMConfig | None = None, progress: Bars | None = None
) -> dict[str, Any]:
    """The current model and its capability profile on the held-out suite. A registry without the model starts from
    the base model (the tiny model by default), which is evaluated and becomes current."""

    def work() -> dict[str, Any]:
        from coworkenv.eval.suite import load_suite
        from coworkenv.models import current_model, promote, record_eval

        suite = load_suite(config.suite, run.data_root)
        if suite.kind == "file":
            raise CoworkEnvError(
                f"suite {config.suite!r}: the nightly loop evaluates on a published suite (a release id or bench)"
            )
        suite_id = suite.source
        entry = current_model(config.model_name, run.data_root) or _registered_base(run, config)
        evaluation = entry.newest_eval(suite_id)
        if evaluation is None:
            release = evaluate_all(
                sub_run(run, "baseline"),
                eval_config(config, f"hf:{entry.path}", suite_id),
                llm,
                progress,
                "baseline trials",
            )
            entry = record_eval(entry.ref, release, data_root=run.data_root)
            evaluation = entry.newest_eval(suite_id)
        if entry.status != "current":
            decision = promote(entry.ref, data_root=run.data_root, suite=suite_id)
            if not decision.promoted:  # a base that breaks a safety rule on the suite is no starting point
                raise CoworkEnvError(f"the loop has no model to start from: {decision.reason}")
        profile = _profile_of(evaluation.release_id, entry.ref, nightly_file(run, "profile.json"), run.data_root)
        return {
            "model": entry.ref,
            "model_path": entry.path,
            "suite": suite_id,
            "eval": evaluation.release_id,
            **profile,
        }

    return once(run, "profile", work)


def _registered_base(run: RunDir, config: NightlyConfig) -> ModelEntry:
    """The base registered as the model's first version, once per run: a run resumed after a crash before the first
    promotion finds the version it registered (by the ref it noted) instead of registering the base again."""
    from coworkenv.models import get_model, register_model
    from coworkenv.pipeline.rundir import write_text

    noted = nightly_file(run, "base_ref")
    if noted.exists():
        return get_model(noted.read_text(encoding="utf-8").strip(), run.data_root)
    base = Path(config.base_model) if config.base_model else _base(run, config.base)
    entry = register_model(base, config.model_name, data_root=run.data_root)
    write_text(noted, entry.ref + "\n")
    return entry


def _base(run: RunDir, name: str) -> Path:
    path = nightly_file(run, "base")
    if not (path / "config.json").exists():
        BASES.get(name).build(path)
    return path


def synthesize_stage(run: RunDir, config: NightlyConfig, llm: LLMConfig | None = None) -> dict[str, Any]:
    """The training tasks: plan (from the profile, or uniform) → generate → validate → repair → rollout → build."""

    def work() -> dict[str, Any]:
        from coworkenv.pipeline.synthesize import SYNTHESIS

        profile = finished(run, "profile")
        synth = sub_run(run, "synthesize")
        settings = SynthesisConfig(
            n=config.budget,
            seed=config.seed,
            workers=config.workers,
            shards=config.workers,
            runtime=config.runtime,
            profile=profile["profile"] if config.plan == "guided" else None,
            **endpoint_settings(config),
        )
        results = SYNTHESIS.results(synth, StageInputs(config=settings, llm=llm), before="gate")  # gates: gate_tasks
        return {"run_id": synth.run_id, "plan": config.plan, "rows": results["build"]}

    return once(run, "synthesize", work)


def gate_tasks_stage(run: RunDir) -> dict[str, Any]:
    """The synthesis run's `validated` and `rollouts` gates, then its release (LATEST moves to it)."""

    def work() -> dict[str, Any]:
        from coworkenv.pipeline.synthesize import SYNTHESIS

        synth = RunDir.open(finished(run, "synthesize")["run_id"], run.data_root)
        manifest = SYNTHESIS.run(synth, StageInputs(), first="gate")
        return {
            "release_id": manifest.release_id,
            "tasks": manifest.row_counts.get("tasks", 0),
            "sft": manifest.row_counts.get("sft", 0),
        }

    return once(run, "gate_tasks", work)


def promote_stage(run: RunDir, config: NightlyConfig) -> dict[str, Any]:
    """Promote the candidate or keep the current model (the decision and its reason are recorded), and write the
    before/after report."""

    def work() -> dict[str, Any]:
        from coworkenv.eval.compare import compare
        from coworkenv.eval.metrics import summarize
        from coworkenv.eval.report import write_report
        from coworkenv.models import PromotionPolicy, promote
        from coworkenv.pipeline.evaluate import eval_rows

        profile, trained = finished(run, "profile"), finished(run, "train")
        policy = PromotionPolicy(margin=config.margin, alpha=config.alpha, safety_tolerance=config.safety_tolerance)
        decision = promote(trained["candidate"], data_root=run.data_root, policy=policy, suite=profile["suite"])
        write_json(nightly_file(run, "decision.json"), decision.model_dump(mode="json"))
        before, after = (
            eval_rows(profile["eval"], run.data_root),
            eval_rows(finished(run, "gate_eval")["release_id"], run.data_root),
        )
        comparison = compare(before, after)  # the seed promotion used: the report shows the p-value it decided on
        report = nightly_file(run, "report")
        write_report(
            report,
            summarize(after, seed=config.seed),
            after,
            comparison=comparison,
            title=f"{trained['candidate']} against {profile['model']}",
        )
        return {
            "promoted": decision.promoted,
            "reason": decision.reason,
            "candidate": trained["candidate"],
            "current": profile["model"],
            "report": str(report / "report.html"),
        }

    return once(run, "promote", work)


def new_profile_stage(run: RunDir, config: NightlyConfig) -> dict[str, Any]:
    """The profile of the model that is current now: what the next loop plans from."""

    def work() -> dict[str, Any]:
        decision = finished(run, "promote")
        source = finished(run, "gate_eval")["release_id"] if decision["promoted"] else finished(run, "profile")["eval"]
        model = decision["candidate"] if decision["promoted"] else decision["current"]
        return {"model": model, **_profile_of(source, model, nightly_file(run, "next_profile.json"), run.data_root)}

    return once(run, "new_profile", work)


NIGHTLY = Job(
    "nightly",
    (
        Stage(
            "profile",
            lambda run, i: profile_stage(run, i.config, i.llm, i.progress),
            (),
            doc="Check the settings; the current model and its capability profile on the held-out suite.",
            endpoint=True,
            gpu=True,
        ),
        Stage(
            "synthesize",
            lambda run, i: synthesize_stage(run, i.config, i.llm),
            (),
            doc="Training tasks planned from the profile: plan → generate → validate → repair → rollout → build.",
            endpoint=True,
        ),
        gate_stage(
            "gate_tasks",
            lambda run, i: gate_tasks_stage(run),
            (),
            doc="The `validated` and `rollouts` gates, then the training release.",
            outlets=("coworkenv-training-release",),
        ),
        Stage(
            "rollouts",
            lambda run, i: rollouts_stage(run, i.config, i.llm, i.progress),
            (),
            doc="The current model plays every training task (rejection sampling's proposals).",
            endpoint=True,
            gpu=True,
        ),
        gate_stage(
            "gate_rollouts",
            lambda run, i: gate_rollouts_stage(run),
            (),
            doc="The `evaluated` gate on the rollouts; their successes become training data.",
            outlets=("coworkenv-rollouts",),
        ),
        Stage(
            "train",
            lambda run, i: train_stage(run, i.config, i.progress),
            (),
            doc="SFT (then GRPO, GDPO or DPO); the checkpoint is registered as a candidate.",
            gpu=True,
            outlets=("coworkenv-candidate-model",),
        ),
        Stage(
            "evaluate",
            lambda run, i: evaluate_stage(run, i.config, i.llm, i.progress),
            (),
            doc="The candidate on the held-out suite.",
            endpoint=True,
            gpu=True,
        ),
        gate_stage(
            "gate_eval",
            lambda run, i: gate_eval_stage(run),
            (),
            doc="The `evaluated` gate on the candidate's evaluation, then its release.",
            outlets=("coworkenv-eval-report",),
        ),
        Stage(
            "promote",
            lambda run, i: promote_stage(run, i.config),
            (),
            doc="Promote the candidate, or keep the current model; the decision and its reason are recorded.",
            outlets=("coworkenv-current-model",),
        ),
        Stage(
            "new_profile",
            lambda run, i: new_profile_stage(run, i.config),
            (),
            doc="The profile of the model that is current now: what tomorrow's plan reads.",
            outlets=("coworkenv-capability-profile",),
        ),
    ),
    config=nightly_config,
    recorded=read_config,
    begin=start,
)
"""One turn of the loop, in order; each stage records its result in `nightly/state.json` (and runs once), so its
outputs are the state's, not paths of their own. The DAG runs one task per stage."""
STAGES = NIGHTLY.names()


def nightly(
    config: NightlyConfig,
    run_id: str,
    data_root: str | os.PathLike[str] | DataRoot | None = None,
    *,
    llm: LLMConfig | None = None,
    progress: Bars | None = None,
    on_stage: StageHook | None = None,
) -> dict[str, Any]:
    """Every stage in order; the same run id resumes a run that stopped. Returns the promotion stage's result.
    `progress(what, total)`: a progress display for each long piece of work (the trials of an evaluation or of the
    rollouts, each training job); none: progress lines logged through `coworkenv.progress`."""
    run = RunDir.open(run_id, data_root)
    llm = llm if llm is not None else config.llm()
    created = outermost_missing(run.path)
    start(run, config)
    try:
        results = NIGHTLY.results(run, StageInputs(config=config, llm=llm, progress=progress), on_stage=on_stage)
    except BaseException:
        recorded = nightly_file(run, "config.json")
        if created is not None and [p for p in run.path.rglob("*") if p.is_file()] == [recorded]:
            recorded.unlink()  # failed before any work (a mistyped suite): leave no run behind
            remove_created(recorded.parent, created)
        raise
    return results["promote"]


def run_stage(
    run_id: str,
    stage: str,
    data_root: str | os.PathLike[str] | DataRoot | None = None,
    *,
    llm: LLMConfig | None = None,
    progress: Bars | None = None,
) -> dict[str, Any]:
    """One stage of a run that has started (its recorded config), e.g. training in a pod of its own; the stages
    before it must have finished, and a finished one is not run again. `progress`: as in `nightly`."""
    if stage not in STAGES:
        raise CoworkEnvError(f"unknown nightly stage {stage!r}: one of {', '.join(STAGES)}")
    run = RunDir.open(run_id, data_root)
    config = read_config(run)
    inputs = StageInputs(config=config, llm=llm if llm is not None else config.llm(), progress=progress)
    return NIGHTLY.run(run, inputs, first=stage, last=stage)
