"""
### CoworkEnv synthesis run

Makes a new **task release**: capability-guided plan → procedural/LLM generation (mapped shards) → the sandboxed
validation battery (mapped shards) → feedback-based repair of the rejects → oracle rollouts (sandboxed) → release
tables (tasks, validations, repairs, trajectories, SFT and RL rows) → **Great Expectations gates** → atomic
publication under `<data root>/releases/<id>/` with `LATEST` flipped last. A failing gate stops the run before
anything is published; its Data Docs report is under `<data root>/runs/<run id>/quality/`.

Every task calls one stage of `coworkenv.pipeline` over the run directory `<data root>/runs/<run id>/`; outside
Airflow, `coworkenv synthesize` runs the same stages (`--run-id` the same run id publishes the same release).
Trigger it from the UI form (generated from `SynthesisConfig`; every field has a description) or the REST API with a
`conf`. The published release updates the `coworkenv-task-release` asset.
"""

from __future__ import annotations

from datetime import timedelta

from airflow.sdk import Asset, dag, get_current_context, task

from coworkenv.pipeline.airflow import dag_params

TASK_RELEASE = Asset("coworkenv-task-release", uri="coworkenv://releases/tasks")


def _run():
    from coworkenv.pipeline.rundir import RunDir

    return RunDir.open(get_current_context()["run_id"])


def _llm(run):
    """The run's LLM endpoint (its Airflow connection, else its base URL and model, else none), its key masked."""
    from coworkenv.pipeline.airflow import llm_endpoint

    return llm_endpoint(run.config())


@dag(
    dag_id="coworkenv_synthesize",
    doc_md=__doc__,
    description="A new task release: plan → generate → validate → repair → rollout → build → gate → publish.",
    schedule=None,
    catchup=False,
    max_active_runs=2,
    tags=["coworkenv", "synthesis", "release"],
    default_args={"owner": "coworkenv", "retries": 2, "retry_delay": timedelta(seconds=20)},
    params=dag_params("coworkenv_synthesize"),
)
def coworkenv_synthesize():
    @task
    def plan() -> list[dict]:
        """Validate the settings, then the capability-guided plan, split into shards."""
        from coworkenv.errors import CoworkEnvError
        from coworkenv.pipeline.airflow import without_retry
        from coworkenv.pipeline.config import synthesis_config
        from coworkenv.pipeline.plan import plan_run

        return without_retry(
            lambda: plan_run(_run(), synthesis_config(dict(get_current_context()["params"]), "settings")),
            CoworkEnvError,
        )

    @task(map_index_template="shard {{ task.op_kwargs['shard']['shard'] }}")
    def generate(shard: dict) -> dict:
        """Generate one shard's tasks (procedural families, and the LLM for llm/mixed)."""
        from coworkenv.pipeline.generate import generate_shard

        run = _run()
        return generate_shard(run, shard, _llm(run))

    @task(map_index_template="shard {{ task.op_kwargs['generated']['shard'] }}")
    def validate(generated: dict) -> dict:
        """Run the validation battery on one shard inside the sandbox."""
        from coworkenv.pipeline.airflow import run_judge
        from coworkenv.pipeline.validate import validate_shard

        run = _run()
        with run_judge(run.config()):  # rubric verdicts are asked here and shipped into the sandbox
            return validate_shard(run, generated["shard"])

    @task
    def repair(validated: list[dict]) -> dict:
        """Repair the rejected tasks from their battery feedback."""
        from coworkenv.pipeline.airflow import run_judge
        from coworkenv.pipeline.repair import repair_run

        run = _run()
        with run_judge(run.config()):
            return {**repair_run(run, _llm(run)), "shards": list(validated)}

    @task
    def rollout(repaired: dict) -> dict:
        """The oracle rolled out on every valid task, in the sandbox."""
        from coworkenv.pipeline.airflow import run_judge
        from coworkenv.pipeline.rollout import rollout_run

        run = _run()
        with run_judge(run.config()):
            return rollout_run(run)

    @task
    def build(rollouts: dict) -> dict:
        """Release tables: valid + repaired tasks, all verdicts, repairs, trajectories, SFT and RL rows."""
        from coworkenv.pipeline.build import build_tables

        return build_tables(_run())

    @task(retries=0)
    def gate(rows: dict) -> dict:
        """Great Expectations gates; a failure stops the run here and nothing is published."""
        from coworkenv.pipeline.airflow import without_retry
        from coworkenv.pipeline.gate import gate_tables
        from coworkenv.quality.gates import GateFailed

        return without_retry(lambda: gate_tables(_run()), GateFailed)

    @task(outlets=[TASK_RELEASE])
    def publish(gates: dict) -> dict:
        """Atomic publication of the release; LATEST flips last. The asset event's extra names the release."""
        from coworkenv.pipeline.airflow import outlet_extra
        from coworkenv.pipeline.publish import publish as publish_run

        manifest = publish_run(_run())  # logs the release id and row counts
        return outlet_extra({"release_id": manifest.release_id, "row_counts": manifest.row_counts})

    shards = plan()
    validated = validate.expand(generated=generate.expand(shard=shards))
    publish(gate(build(rollout(repair(validated)))))


coworkenv_synthesize()
