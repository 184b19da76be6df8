"""
### CoworkEnv synthesis run

Makes a new **task release**: capability-guided plan → procedural/LLM generation (mapped shards) → the sandboxed
validation battery (mapped shards) → feedback-based repair of the rejects → release tables (tasks, validations,
repairs, oracle trajectories, SFT and RL rows) → **Great Expectations gates** → atomic publication under
`<data root>/releases/<id>/` with `LATEST` flipped last. A failing gate stops the run before anything is
published; its Data Docs report is under `<data root>/runs/<run id>/quality/`.

Trigger it from the UI form (every field has a description) or the REST API with a `conf`. The same run id
always yields the same release. The published release updates the `coworkenv-task-release` asset.
"""

from __future__ import annotations

from datetime import timedelta

from airflow.sdk import Asset, Param, dag, get_current_context, task

from coworkenv.sandbox.choices import RUNTIME_CHOICES
from coworkenv.spec.capabilities import CAPABILITIES
from coworkenv.synth.family import load_families

TASK_RELEASE = Asset("coworkenv-task-release", uri="coworkenv://releases/tasks")

PARAMS = {
    "n": Param(100, type="integer", minimum=1, maximum=1_000_000, description="Tasks to generate."),
    "seed": Param(0, type="integer", minimum=0, description="Run seed: the same settings give the same tasks."),
    "families": Param(None, type=["null", "array"], items={"type": "string", "enum": load_families().names()},
                      description="Only these families (empty: all)."),
    "capabilities": Param(None, type=["null", "array"], items={"type": "string", "enum": CAPABILITIES.names()},
                          description="Only these capabilities (empty: all)."),
    "difficulty_min": Param(1, type="integer", minimum=1, maximum=5, description="Lowest difficulty."),
    "difficulty_max": Param(5, type="integer", minimum=1, maximum=5, description="Highest difficulty."),
    "generator": Param("procedural", type="string", enum=["procedural", "llm", "mixed"], description="Where tasks come from."),
    "llm_conn_id": Param(None, type=["null", "string"],
                         description="Airflow connection of an OpenAI-compatible endpoint (host = base URL, password = key, "
                                     "extra = {'model': ...}); needed for llm/mixed generation and LLM repair."),
    "llm_share": Param(0.25, type="number", minimum=0, maximum=1, description="Share of LLM tasks when mixed."),
    "repair_rounds": Param(3, type="integer", minimum=0, maximum=10, description="Repair rounds before a task is rejected."),
    "workers": Param(2, type="integer", minimum=1, maximum=64, description="Sandboxed validation workers per shard."),
    "runtime": Param("auto", type="string", enum=list(RUNTIME_CHOICES),
                     description="Sandbox runtime for validation (auto: bubblewrap when available)."),
    "shards": Param(2, type="integer", minimum=1, maximum=256, description="Generation/validation shards."),
    "profile": Param(None, type=["null", "string"], description="Capability profile JSON to plan from (empty: cold start)."),
}  # fmt: skip


def _config():
    from coworkenv.pipeline.synthesize import SynthesisConfig

    params = get_current_context()["params"]
    return SynthesisConfig.model_validate({k: params[k] for k in SynthesisConfig.model_fields if k in params})


def _run_id() -> str:
    return get_current_context()["run_id"]


def _llm():
    conn_id = get_current_context()["params"].get("llm_conn_id")
    if not conn_id:
        return None
    from coworkenv.synth.llm import LLMConfig, LLMGenerator

    return LLMGenerator(LLMConfig.from_airflow_connection(conn_id))


@dag(
    dag_id="coworkenv_synthesize",
    doc_md=__doc__,
    schedule=None,
    catchup=False,
    max_active_runs=2,
    tags=["coworkenv", "synthesis", "release"],
    default_args={"owner": "coworkenv", "retries": 2, "retry_delay": timedelta(seconds=20)},
    params=PARAMS,
)
def coworkenv_synthesize():
    @task
    def plan() -> list[dict]:
        """Capability-guided plan, split into shards."""
        from coworkenv.pipeline.synthesize import plan_shards

        return plan_shards(_config(), _run_id())

    @task(map_index_template="shard {{ task.op_kwargs['shard']['shard'] }}")
    def generate(shard: dict) -> dict:
        """Generate one shard's tasks (procedural families, and the LLM for llm/mixed)."""
        from coworkenv.pipeline.synthesize import generate_shard

        return generate_shard(_config(), _run_id(), shard, llm=_llm())

    @task
    def validate(generated: dict) -> dict:
        """Run the validation battery on one shard inside the sandbox."""
        from coworkenv.pipeline.synthesize import validate_shard

        return validate_shard(_config(), _run_id(), generated)

    @task
    def repair(validated: list[dict]) -> dict:
        """Repair the rejected tasks from their battery feedback."""
        from coworkenv.pipeline.synthesize import repair_invalid

        summary = repair_invalid(_config(), _run_id(), llm=_llm())
        return {**summary, "shards": list(validated)}

    @task
    def build(repaired: dict) -> dict:
        """Release tables: valid + repaired tasks, all verdicts, repairs, oracle trajectories, SFT and RL rows."""
        from coworkenv.pipeline.synthesize import build_tables

        return build_tables(_config(), _run_id())

    @task(retries=0)
    def gate(rows: dict) -> dict:
        """Great Expectations gates; a failure stops the run here and nothing is published."""
        from airflow.sdk.exceptions import AirflowFailException

        from coworkenv.pipeline.synthesize import gate_tables
        from coworkenv.quality.gates import GateFailed

        try:
            return gate_tables(_config(), _run_id())
        except GateFailed as exc:
            raise AirflowFailException(str(exc)) from None

    @task(outlets=[TASK_RELEASE])
    def publish(gates: dict) -> dict:
        """Atomic publication of the release; LATEST flips last."""
        from coworkenv.pipeline.synthesize import publish as publish_release

        manifest = publish_release(_config(), _run_id())
        print(f"published release {manifest['release_id']}: {manifest['row_counts']}")
        return {"release_id": manifest["release_id"], "row_counts": manifest["row_counts"]}

    shards = plan()
    validated = validate.expand(generated=generate.expand(shard=shards))
    publish(gate(build(repair(validated))))


coworkenv_synthesize()
