"""
### CoworkEnv nightly loop

Every night (or when triggered with the form), one turn of the closed loop on the model named `model_name` in the
registry under the data root:

**profile** (the current model's capability profile on the held-out suite; an empty registry starts from the tiny
model) → **synthesize** `budget` training tasks planned from that profile → **gate_tasks** (`validated` and
`rollouts` gates, then the release) → **rollouts** (the current model plays each task `trials` times: rejection
sampling) → **gate_rollouts** (`evaluated` gate; its successes join the oracle's trajectories) → **train** (SFT, then
GRPO, GDPO or DPO per `method`) → **evaluate** the candidate on the held-out suite (contamination-checked
against every release its lineage trained on) → **gate_eval** → **promote** (only with a margin, a significant
paired difference and no safety regression; the reason is recorded) → **new_profile** for the next night.

The stages that run a local model (profile, rollouts, train, evaluate) go to the `gpu` queue and pool (the cluster
profile's GPU workers); the others to the `default` queue. A failing gate fails the run with nothing promoted. A task
that is retried or cleared resumes: finished stages are recorded in `<data root>/runs/<run id>/nightly/state.json` and
are not run again. `coworkenv nightly` runs the same stages outside Airflow.
"""

from __future__ import annotations

from datetime import timedelta

from airflow.sdk import Asset, dag, get_current_context, task

from coworkenv.pipeline.airflow import GPU_TASK, dag_params, train_pod_operator
from coworkenv.pipeline.kubernetes import train_pod_settings

TRAIN_POD = train_pod_settings()  # COWORKENV_TRAIN_ON=kubernetes: training in a pod of its own (docs/operations.md)

TRAINING_RELEASE = Asset("coworkenv-training-release", uri="coworkenv://nightly/training-release")
ROLLOUTS = Asset("coworkenv-rollouts", uri="coworkenv://nightly/rollouts")
CANDIDATE = Asset("coworkenv-candidate-model", uri="coworkenv://nightly/candidate-model")
EVAL_REPORT = Asset("coworkenv-eval-report", uri="coworkenv://eval/report")
CURRENT_MODEL = Asset("coworkenv-current-model", uri="coworkenv://nightly/current-model")
CAPABILITY_PROFILE = Asset("coworkenv-capability-profile", uri="coworkenv://eval/capability-profile")


def _run():
    from coworkenv.pipeline.rundir import RunDir

    return RunDir.open(get_current_context()["run_id"])


def _config(run):
    from coworkenv.pipeline.nightly import read_config

    return read_config(run)


def _with_endpoint(stage):
    """A stage that may call the run's LLM endpoint (generation, repair, an `openai:` agent), read from its connection,
    with the run's rubric judge installed."""
    from coworkenv.pipeline.airflow import llm_endpoint, run_judge

    run = _run()
    config = _config(run)
    with run_judge(config):  # rubric checks in validation, repair and evaluation
        return stage(run, config, llm_endpoint(config))


def _gate(stage):
    """A gate stage: a failed gate fails the task at once; the stage's result (its release) is its asset event's extra."""
    from coworkenv.pipeline.airflow import outlet_extra, without_retry
    from coworkenv.quality.gates import GateFailed

    return outlet_extra(without_retry(stage, GateFailed))


@dag(
    dag_id="coworkenv_nightly",
    doc_md=__doc__,
    description="Profile → synthesize → rollouts → train → evaluate → promote, on the registry's current model.",
    schedule="@daily",
    catchup=False,
    max_active_runs=1,
    tags=["coworkenv", "training", "nightly"],
    default_args={"owner": "coworkenv", "retries": 1, "retry_delay": timedelta(seconds=30)},
    params=dag_params("coworkenv_nightly"),
)
def coworkenv_nightly():
    @task(**GPU_TASK)
    def profile() -> dict:
        """Check the settings; the current model and its capability profile on the held-out suite."""
        from coworkenv.errors import CoworkEnvError
        from coworkenv.pipeline.airflow import llm_endpoint, run_judge, without_retry
        from coworkenv.pipeline.config import nightly_config
        from coworkenv.pipeline.nightly import profile_stage, start

        run = _run()
        config = without_retry(
            lambda: nightly_config(dict(get_current_context()["params"]), "settings"), CoworkEnvError
        )
        without_retry(lambda: start(run, config), CoworkEnvError)
        with run_judge(config):
            return profile_stage(run, config, llm_endpoint(config))

    @task
    def synthesize(_: dict) -> dict:
        """Training tasks planned from the profile: plan → generate → validate → repair → rollout → build."""
        from coworkenv.pipeline.nightly import synthesize_stage

        return _with_endpoint(synthesize_stage)

    @task(retries=0, outlets=[TRAINING_RELEASE])
    def gate_tasks(_: dict) -> dict:
        """The `validated` and `rollouts` gates, then the training release."""
        from coworkenv.pipeline.nightly import gate_tasks_stage

        return _gate(lambda: gate_tasks_stage(_run()))

    @task(**GPU_TASK)
    def rollouts(_: dict) -> dict:
        """The current model plays every training task (rejection sampling's proposals)."""
        from coworkenv.pipeline.nightly import rollouts_stage

        return _with_endpoint(rollouts_stage)

    @task(retries=0, outlets=[ROLLOUTS])
    def gate_rollouts(_: dict) -> dict:
        """The `evaluated` gate on the rollouts; their successes become training data."""
        from coworkenv.pipeline.nightly import gate_rollouts_stage

        return _gate(lambda: gate_rollouts_stage(_run()))

    @task(**GPU_TASK, outlets=[CANDIDATE])
    def train(_: dict) -> dict:
        """SFT (then GRPO, GDPO or DPO); the checkpoint is registered as a candidate."""
        from coworkenv.pipeline.airflow import outlet_extra
        from coworkenv.pipeline.nightly import train_stage

        run = _run()
        return outlet_extra(train_stage(run, _config(run)))

    @task(**GPU_TASK)
    def evaluate(_: dict) -> dict:
        """The candidate on the held-out suite."""
        from coworkenv.pipeline.nightly import evaluate_stage

        return _with_endpoint(evaluate_stage)

    @task(retries=0, outlets=[EVAL_REPORT])
    def gate_eval(_: dict) -> dict:
        """The `evaluated` gate on the candidate's evaluation, then its release."""
        from coworkenv.pipeline.nightly import gate_eval_stage

        return _gate(lambda: gate_eval_stage(_run()))

    @task(outlets=[CURRENT_MODEL])
    def promote(_: dict) -> dict:
        """Promote the candidate, or keep the current model; the decision and its reason are recorded."""
        from coworkenv.pipeline.airflow import outlet_extra
        from coworkenv.pipeline.nightly import promote_stage

        run = _run()
        return outlet_extra(promote_stage(run, _config(run)))

    @task(outlets=[CAPABILITY_PROFILE])
    def new_profile(_: dict) -> dict:
        """The profile of the model that is current now: what tomorrow's plan reads."""
        from coworkenv.pipeline.airflow import outlet_extra
        from coworkenv.pipeline.nightly import new_profile_stage

        run = _run()
        return outlet_extra(new_profile_stage(run, _config(run)))

    sampled = gate_rollouts(rollouts(gate_tasks(synthesize(profile()))))
    if TRAIN_POD.on == "kubernetes":
        in_pod = train_pod_operator(TRAIN_POD, task_id="train", **GPU_TASK, outlets=[CANDIDATE])
        sampled >> in_pod
        trained = in_pod.output
    else:
        trained = train(sampled)
    new_profile(promote(gate_eval(evaluate(trained))))


coworkenv_nightly()
