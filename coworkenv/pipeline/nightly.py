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
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from coworkenv.data.root import DataRoot
from coworkenv.errors import CoworkEnvError
from coworkenv.fileio import outermost_missing, remove_created
from coworkenv.llm import LLMConfig
from coworkenv.pipeline.config import EndpointSettings, EvaluationConfig, NightlyConfig, SynthesisConfig
from coworkenv.pipeline.job import StageInputs
from coworkenv.pipeline.rundir import RunDir, StageHook, stage_reporter, write_json
from coworkenv.progress import Bars, logged
from coworkenv.train.bases import BASES

if TYPE_CHECKING:
    from coworkenv.models import ModelEntry

from coworkenv.pipeline.nightly_state import finished, nightly_file, once, read_config, read_state, start, sub_run
from coworkenv.pipeline.nightly_train import train_stage

__all__ = ["STAGES", "nightly", "nightly_file", "read_config", "read_state", "run_stage", "start", "train_stage"]

log = logging.getLogger(__name__)

STAGES = (
    "profile",
    "synthesize",
    "gate_tasks",
    "rollouts",
    "gate_rollouts",
    "train",
    "evaluate",
    "gate_eval",
    "promote",
    "new_profile",
)
"""In order; the DAG runs one task per stage."""


# --- helpers over the registry and evaluations ---------------------------------------------------------------------


def _endpoint(config: NightlyConfig) -> dict[str, Any]:
    return config.model_dump(include=set(EndpointSettings.model_fields))


def _eval_config(config: NightlyConfig, agent: str, suite: str, **overrides: Any) -> EvaluationConfig:
    recipe = BASES.get(config.base).recipe
    settings = {
        "trials": config.eval_trials,
        "limit": config.eval_limit,
        "max_new_tokens": config.max_new_tokens or recipe.max_new_tokens,
        "max_turns": config.max_turns or recipe.max_turns,
        "seed": config.seed,
        "workers": config.workers,
        "runtime": config.runtime,
    }
    return EvaluationConfig(**_endpoint(config), agent=agent, suite=suite, **{**settings, **overrides})


def _evaluation(
    run: RunDir,
    config: EvaluationConfig | None,
    llm: LLMConfig | None,
    progress: Bars | None,
    what: str,
    *,
    first: str | None = None,
    last: str | None = None,
) -> dict[str, Any]:
    """The evaluation job's stages from `first` to `last` (`pipeline.evaluate.EVALUATION`) over `run`, its trials'
    progress shown by `progress` (none: logged) once the prepare stage knows how many; each stage's result by name."""
    from coworkenv.pipeline.evaluate import EVALUATION, trial_count

    results: dict[str, Any] = {}
    with (progress or logged())(what, None, unit="trial") as step:

        def on_stage(stage: str, result: Any) -> None:
            results[stage] = result
            if stage == "prepare":
                step(0, total=trial_count(run))

        EVALUATION.run(
            run, StageInputs(config=config, llm=llm, progress=step), first=first, last=last, on_stage=on_stage
        )
    return results


def _evaluate_all(
    run: RunDir, config: EvaluationConfig, llm: LLMConfig | None, progress: Bars | None = None, what: str = "trials"
) -> str:
    """The whole evaluation job over `run`; its release id."""
    return _evaluation(run, config, llm, progress, what)["publish"].release_id


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
            release = _evaluate_all(
                sub_run(run, "baseline"),
                _eval_config(config, f"hf:{entry.path}", suite_id),
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
            **_endpoint(config),
        )
        rows = SYNTHESIS.run(synth, StageInputs(config=settings, llm=llm), last="build")  # gate and publish: gate_tasks
        return {"run_id": synth.run_id, "plan": config.plan, "rows": rows}

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


def rollouts_stage(
    run: RunDir, config: NightlyConfig, llm: LLMConfig | None = None, progress: Bars | None = None
) -> dict[str, Any]:
    """The current model plays every training task `trials` times, sampling (rejection sampling's proposals)."""

    def work() -> dict[str, Any]:
        if config.trials == 0:
            return {"run_id": None, "skipped": "trials 0: no rejection sampling"}
        release = finished(run, "gate_tasks")["release_id"]
        model = finished(run, "profile")["model_path"]
        # the suite is the training release itself: LATEST, so no contamination check applies
        settings = _eval_config(
            config, f"hf:{model}", release, trials=config.trials, temperature=config.rollout_temperature, limit=None
        )
        rollout = sub_run(run, "rollouts")
        played = _evaluation(rollout, settings, llm, progress, "rollout trials", last="build")["trials"]
        return {"run_id": rollout.run_id, **played}  # gate and publish: gate_rollouts

    return once(run, "rollouts", work)


def gate_rollouts_stage(run: RunDir) -> dict[str, Any]:
    """The rollouts' `evaluated` gate, their release, and the successes as `sft` rows."""

    def work() -> dict[str, Any]:
        from coworkenv.pipeline import evaluate as ev
        from coworkenv.pipeline.evaluate import EVALUATION

        if finished(run, "rollouts")["run_id"] is None:
            return {"release_id": None, "own_sft_rows": 0, "own_sft": None}
        rollout = RunDir.open(finished(run, "rollouts")["run_id"], run.data_root)
        release = EVALUATION.run(rollout, StageInputs(), first="gate").release_id
        own = ev.sft_from_run(rollout, nightly_file(run, "own_sft.parquet"))
        return {
            "release_id": release,
            "own_sft_rows": own["sft_rows"],
            "own_sft": own["path"] if own["sft_rows"] else None,
        }

    return once(run, "gate_rollouts", work)


def evaluate_stage(
    run: RunDir, config: NightlyConfig, llm: LLMConfig | None = None, progress: Bars | None = None
) -> dict[str, Any]:
    """The candidate on the held-out suite, checked against every release its lineage trained on (contamination)."""

    def work() -> dict[str, Any]:
        profile, trained = finished(run, "profile"), finished(run, "train")
        lineage = _lineage_releases(run, trained["candidate"])
        settings = _eval_config(config, f"hf:{trained['candidate_path']}", profile["suite"], train_releases=lineage)
        evaluation = sub_run(run, "evaluate")
        results = _evaluation(evaluation, settings, llm, progress, "evaluation trials", last="build")
        return {"run_id": evaluation.run_id, **results["trials"], "report": results["build"]["report"]}

    return once(run, "evaluate", work)


def _lineage_releases(run: RunDir, ref: str) -> list[str]:
    """The training releases of a model and of every model it descends from."""
    from coworkenv.models import get_model

    releases: list[str] = []
    entry: Any = get_model(ref, run.data_root)
    while entry is not None:
        if entry.training_release and entry.training_release not in releases:
            releases.append(entry.training_release)
        entry = get_model(entry.parent, run.data_root) if entry.parent else None
    return releases


def gate_eval_stage(run: RunDir) -> dict[str, Any]:
    """The evaluation's `evaluated` gate, its release, and the result on the candidate's registry entry."""

    def work() -> dict[str, Any]:
        from coworkenv.models import record_eval
        from coworkenv.pipeline.evaluate import EVALUATION

        evaluation = RunDir.open(finished(run, "evaluate")["run_id"], run.data_root)
        release = EVALUATION.run(evaluation, StageInputs(), first="gate").release_id
        record_eval(finished(run, "train")["candidate"], release, data_root=run.data_root)
        return {"release_id": release}

    return once(run, "gate_eval", work)


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


Stage = Callable[[RunDir, NightlyConfig, "LLMConfig | None", "Bars | None"], dict[str, Any]]
STAGE_RUNS: dict[str, Stage] = {
    "profile": lambda run, config, llm, progress: profile_stage(run, config, llm, progress),
    "synthesize": lambda run, config, llm, progress: synthesize_stage(run, config, llm),
    "gate_tasks": lambda run, config, llm, progress: gate_tasks_stage(run),
    "rollouts": lambda run, config, llm, progress: rollouts_stage(run, config, llm, progress),
    "gate_rollouts": lambda run, config, llm, progress: gate_rollouts_stage(run),
    "train": lambda run, config, llm, progress: train_stage(run, config, progress),
    "evaluate": lambda run, config, llm, progress: evaluate_stage(run, config, llm, progress),
    "gate_eval": lambda run, config, llm, progress: gate_eval_stage(run),
    "promote": lambda run, config, llm, progress: promote_stage(run, config),
    "new_profile": lambda run, config, llm, progress: new_profile_stage(run, config),
}
"""Each stage by name, called the same way (what it does not use, it ignores)."""


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
    done = stage_reporter(on_stage)
    try:
        results = {stage: done(stage, STAGE_RUNS[stage](run, config, llm, progress)) for stage in STAGES}
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
    if stage not in STAGE_RUNS:
        raise CoworkEnvError(f"unknown nightly stage {stage!r}: one of {', '.join(STAGES)}")
    run = RunDir.open(run_id, data_root)
    config = read_config(run)
    return STAGE_RUNS[stage](run, config, llm if llm is not None else config.llm(), progress)
