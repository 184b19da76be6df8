"""The nightly loop's stages that run the evaluation job (docs/design/training.md, "Nightly loop"): the current
model's rollouts on the training tasks and their gate, the candidate's evaluation on the held-out suite and its gate,
and the evaluation settings a loop derives from its config. The package declares them in `NIGHTLY`."""

from __future__ import annotations

from typing import Any

from coworkenv.llm import LLMConfig
from coworkenv.pipeline.config import EndpointSettings, EvaluationConfig, NightlyConfig
from coworkenv.pipeline.job import StageInputs
from coworkenv.pipeline.nightly.run_state import finished, nightly_file, once, sub_run
from coworkenv.pipeline.rundir import RunDir
from coworkenv.progress import Bars, logged
from coworkenv.train.bases import BASES


def endpoint_settings(config: NightlyConfig) -> dict[str, Any]:
    return config.model_dump(include=set(EndpointSettings.model_fields))


def eval_config(config: NightlyConfig, agent: str, suite: str, **overrides: Any) -> EvaluationConfig:
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
    return EvaluationConfig(**endpoint_settings(config), agent=agent, suite=suite, **{**settings, **overrides})


def _evaluation(
    run: RunDir,
    config: EvaluationConfig | None,
    llm: LLMConfig | None,
    progress: Bars | None,
    what: str,
    *,
    before: str | None = None,
) -> dict[str, Any]:
    """The evaluation job's stages (`pipeline.evaluation.EVALUATION`) over `run`, all or up to the one `before` a stage,
    its trials' progress shown by `progress` (none: logged) once the prepare stage knows how many; each stage's result
    by name."""
    from coworkenv.pipeline.evaluation import EVALUATION
    from coworkenv.pipeline.evaluation.trials import trial_count

    with (progress or logged())(what, None, unit="trial") as step:

        def on_stage(stage: str, result: Any) -> None:
            if stage == "prepare":
                step(0, total=trial_count(run))

        inputs = StageInputs(config=config, llm=llm, progress=step)
        return EVALUATION.results(run, inputs, before=before, on_stage=on_stage)


def evaluate_all(
    run: RunDir, config: EvaluationConfig, llm: LLMConfig | None, progress: Bars | None = None, what: str = "trials"
) -> str:
    """The whole evaluation job over `run`; its release id."""
    return _evaluation(run, config, llm, progress, what)["publish"].release_id


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
        settings = eval_config(
            config, f"hf:{model}", release, trials=config.trials, temperature=config.rollout_temperature, limit=None
        )
        rollout = sub_run(run, "rollouts")
        played = _evaluation(rollout, settings, llm, progress, "rollout trials", before="gate")["trials"]
        return {"run_id": rollout.run_id, **played}  # gate and publish: gate_rollouts

    return once(run, "rollouts", work)


def gate_rollouts_stage(run: RunDir) -> dict[str, Any]:
    """The rollouts' `evaluated` gate, their release, and the successes as `sft` rows."""

    def work() -> dict[str, Any]:
        from coworkenv.pipeline.evaluation import EVALUATION
        from coworkenv.pipeline.training_data import sft_from_run

        if finished(run, "rollouts")["run_id"] is None:
            return {"release_id": None, "own_sft_rows": 0, "own_sft": None}
        rollout = RunDir.open(finished(run, "rollouts")["run_id"], run.data_root)
        release = EVALUATION.run(rollout, StageInputs(), first="gate").release_id
        own = sft_from_run(rollout, nightly_file(run, "own_sft.parquet"))
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
        settings = eval_config(config, f"hf:{trained['candidate_path']}", profile["suite"], train_releases=lineage)
        evaluation = sub_run(run, "evaluate")
        results = _evaluation(evaluation, settings, llm, progress, "evaluation trials", before="gate")
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
        from coworkenv.pipeline.evaluation import EVALUATION

        evaluation = RunDir.open(finished(run, "evaluate")["run_id"], run.data_root)
        release = EVALUATION.run(evaluation, StageInputs(), first="gate").release_id
        record_eval(finished(run, "train")["candidate"], release, data_root=run.data_root)
        return {"release_id": release}

    return once(run, "gate_eval", work)
