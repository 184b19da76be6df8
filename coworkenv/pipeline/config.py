"""The synthesis job's configuration: one pydantic model whose fields carry their help text.

It is the single source of the `coworkenv synthesize` options (and `coworkenv generate`'s), of a YAML file given
with `--config run.yaml`, and of the trigger form of the `coworkenv_synthesize` DAG (its Params are generated from
this model): a new field appears in all three at once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, Self, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from coworkenv.caps import CAPS
from coworkenv.errors import CoworkEnvError, format_validation_error
from coworkenv.files import read_text
from coworkenv.llm import LLMConfig
from coworkenv.sandbox.choices import RuntimeChoice
from coworkenv.synth.generate import GenerateRequest


class EndpointSettings(BaseModel):
    """An OpenAI-compatible endpoint for the LLM roles of a job (generator, repairer, agent, simulated user)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    llm_conn_id: str | None = Field(
        None, title="LLM connection",
        description="Airflow connection of an OpenAI-compatible endpoint (host = base URL, password = API key, extra = "
        '{"model": ...}); Airflow runs only.',
    )  # fmt: skip
    llm_base_url: str | None = Field(None, title="LLM base URL", description="OpenAI-compatible endpoint, instead of a connection.")
    llm_model: str | None = Field(None, title="LLM model", description="Model name at that endpoint.")
    llm_api_key_env: str = Field("OPENAI_API_KEY", title="LLM key variable", description="Environment variable holding the endpoint's API key.")
    llm_concurrency: int = Field(4, ge=1, le=256, title="LLM concurrency", description="LLM requests in flight at once.")
    llm_timeout_s: float = Field(120.0, gt=0, title="LLM timeout", description="LLM request timeout in seconds.")

    def endpoint_model(self) -> str | None:
        """The model to ask at the endpoint when none is named elsewhere (a connection's extra can name one)."""
        return self.llm_model

    def llm(self) -> LLMConfig | None:
        """The endpoint given by base URL and model (an Airflow connection is resolved by `pipeline.airflow`)."""
        model = self.endpoint_model()
        if not (self.llm_base_url and model):
            return None
        return LLMConfig(base_url=self.llm_base_url, model=model, api_key_env=self.llm_api_key_env,
                         concurrency=self.llm_concurrency, timeout_s=self.llm_timeout_s)  # fmt: skip


RUNTIME_FIELD = Field("auto", title="Sandbox", description="Sandbox runtime (auto: bubblewrap when available; none: in-process, trusted input only).")


class SynthesisConfig(EndpointSettings, GenerateRequest):
    """What a synthesis run makes: plan → generate → validate → repair → rollout → build → gate → publish. The fields
    of what to generate come from `GenerateRequest`; these add the endpoint (for LLM generation and LLM repair),
    repair, sandbox and sharding settings."""

    repair_rounds: int = Field(3, ge=0, le=10, title="Repair rounds", description="Repair rounds before a task is rejected.")
    workers: int = Field(2, ge=1, le=64, title="Sandbox workers", description="Sandboxed workers per shard (validation, repair, rollouts).")
    runtime: RuntimeChoice = RUNTIME_FIELD
    task_budget_s: float | None = Field(
        None, gt=0, le=86_400, title="Task budget",
        description="Wall-clock seconds one task may take in a sandboxed stage (validate, repair, rollout); over it, the task fails "
        "with sandbox_timeout and the rest of the batch goes on. Default: each job's own budget (validation 5 s; repair and rollout 60 s).",
    )  # fmt: skip
    shards: int = Field(2, ge=1, le=256, title="Shards", description="Generation and validation shards (mapped tasks in Airflow).")
    profile: str | None = Field(None, title="Capability profile", description="Capability profile JSON to plan from (default: cold start).")

    @model_validator(mode="after")
    def _llm_endpoint(self) -> Self:
        if self.generator != "procedural" and not self.llm_conn_id and not (self.llm_base_url and self.llm_model):
            raise ValueError(f"generator {self.generator!r} needs an LLM endpoint: llm_conn_id (in Airflow), or llm_base_url and llm_model")
        return self


class EvaluationConfig(EndpointSettings):
    """What an evaluation run measures (docs/architecture.md, "Evaluation"): an agent on a suite, k trials per task →
    `eval_results`, `trajectories` and `capability_profile` rows, a report and the profile the planner reads. The
    endpoint settings serve `openai:<model>` agents (the model name comes from the agent spec) and the LLM user."""

    agent: str = Field(
        "oracle", title="Agent", min_length=1,
        description="The agent: oracle, null, random, hf:<model dir>, or openai:<model> (at the endpoint below).",
    )  # fmt: skip
    suite: str = Field(
        "bench", title="Suite", min_length=1,
        description="What to evaluate on: a release id, `bench` (the newest coworkenv-bench release), or a .jsonl file of TaskSpecs.",
    )  # fmt: skip
    trials: int = Field(3, ge=1, le=32, title="Trials", description="Trials per task (k of pass@k and pass^k).")
    limit: int | None = Field(None, ge=1, le=CAPS.tasks_per_run, title="Task limit", description="Evaluate only the suite's first N tasks.")
    workers: int = Field(2, ge=1, le=64, title="Workers", description="Processes for local agents (oracle, null, random).")
    runtime: RuntimeChoice = RUNTIME_FIELD
    batch_size: int = Field(16, ge=1, le=512, title="Batch size", description="Episodes generated together by a local model (hf: agents).")
    max_new_tokens: int | None = Field(
        None, ge=1, le=32_768, title="Max new tokens",
        description="Reply length limit of a model agent per turn, in tokens (hf: new tokens; openai: the request's max_tokens). "
        "Default: the model's generation config, else 256 (hf:); the endpoint settings' 6000 (openai:).",
    )  # fmt: skip
    temperature: float = Field(0.0, ge=0.0, le=2.0, title="Temperature", description="Sampling temperature of model agents (0: greedy).")
    max_turns: int | None = Field(
        None, ge=1, le=10_000, title="Turn limit", description="Assistant turns per episode (default: enough for the task's solution)."
    )
    episode_wall_s: float = Field(
        300.0, gt=0, le=86_400, title="Episode time limit", description="Wall-clock seconds per episode; over it, the trial fails."
    )
    user: Literal["scripted", "llm"] = Field(
        "scripted", title="Simulated user",
        description="The simulated user of multi-turn tasks: the spec's scripted rules, or an LLM persona at the endpoint "
        "(it reveals only the spec's facts, in their order).",
    )  # fmt: skip
    seed: int = Field(
        0,
        ge=0,
        title="Seed",
        description="Seed of sampling agents and the bootstrap: the same settings give the same results where the agent is deterministic.",
    )
    train_releases: list[str] | None = Field(
        None, title="Training releases",
        description="Task releases the model was trained on, for the contamination check (default: the LATEST task release, if any).",
    )  # fmt: skip
    contamination_threshold: float = Field(
        0.8,
        gt=0.0,
        le=1.0,
        title="Near-duplicate threshold",
        description="Instruction similarity (MinHash Jaccard) at which a suite task counts as a near-duplicate of a training task.",
    )
    max_contaminated_share: float = Field(
        0.0,
        ge=0.0,
        le=1.0,
        title="Allowed contamination",
        description="Share of suite tasks that may match training tasks before the evaluation refuses to run.",
    )

    def endpoint_model(self) -> str | None:
        """`llm_model`, else the model an `openai:<model>` agent names: the endpoint needs no second name for it."""
        kind, _, target = self.agent.strip().partition(":")
        return self.llm_model or (target if kind == "openai" and target else None)


class NightlyConfig(EndpointSettings):
    """One turn of the closed loop (docs/architecture.md, "Nightly loop"): the current model's profile plans the
    tasks, its own successes on them join the oracle's trajectories as training data, the trained candidate is
    evaluated on the held-out suite and promoted only if it is clearly better and no less safe."""

    model_name: str = Field("coworkenv-agent", min_length=1, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$", title="Model name",
                            description="Registry name of the model the loop trains (its current version is the starting point).")
    base_model: str | None = Field(
        None, title="Base model",
        description="Checkpoint the registry starts from when it has no model of that name (default: the tiny model, built offline).",
    )  # fmt: skip
    budget: int = Field(200, ge=1, le=CAPS.tasks_per_run, title="Task budget", description="Training tasks synthesized per loop.")
    plan: Literal["guided", "uniform"] = Field(
        "guided", title="Plan", description="guided: plan from the current model's capability profile; uniform: the cold-start plan."
    )
    method: Literal["sft", "grpo", "gdpo", "dpo"] = Field(
        "sft", title="Method", description="Training: SFT alone, or SFT followed by GRPO, GDPO (per-reward normalization) or DPO."
    )
    trials: int = Field(2, ge=1, le=32, title="Rollout trials", description="Trials per training task in the rejection-sampling rollouts.")
    rollout_temperature: float = Field(0.7, ge=0.0, le=2.0, title="Rollout temperature", description="Sampling temperature of the rollouts.")
    suite: str = Field(
        "bench", min_length=1, title="Held-out suite", description="Suite of the before/after evaluation (`bench`: the newest benchmark)."
    )
    eval_trials: int = Field(3, ge=1, le=32, title="Evaluation trials", description="Trials per suite task (greedy decoding).")
    eval_limit: int | None = Field(None, ge=1, le=CAPS.tasks_per_run, title="Suite limit", description="Evaluate only the suite's first N tasks.")
    max_new_tokens: int = Field(96, ge=1, le=32_768, title="Max new tokens", description="Tokens a model turn may generate.")
    sft_steps: int = Field(100, ge=1, le=1_000_000, title="SFT steps", description="Optimizer steps of the SFT job.")
    sft_learning_rate: float = Field(3e-3, gt=0, le=1.0, title="SFT learning rate", description="Peak SFT learning rate (3e-3 suits the tiny model).")
    rl_steps: int = Field(20, ge=1, le=1_000_000, title="RL steps", description="Optimizer steps of the GRPO, GDPO or DPO job after SFT.")
    batch_size: int = Field(4, ge=1, le=4096, title="Training batch", description="Conversations per training step.")
    margin: float = Field(0.02, ge=0.0, le=1.0, title="Promotion margin", description="Mean-score gain the candidate needs over the current model.")
    alpha: float = Field(0.05, gt=0.0, le=1.0, title="Significance", description="The paired difference's p-value must be below this.")
    safety_tolerance: float = Field(0.0, ge=0.0, le=1.0, title="Safety tolerance", description="How far the candidate's mean safety may fall.")
    seed: int = Field(0, ge=0, le=999_999, title="Seed", description="Seed of the plan, the rollouts and the training order.")
    workers: int = Field(2, ge=1, le=64, title="Workers", description="Sandboxed workers of synthesis and rollouts.")
    runtime: RuntimeChoice = RUNTIME_FIELD


C = TypeVar("C", bound=BaseModel)


def validated_config(model: type[C], values: dict[str, Any], where: str = "") -> C:
    """A job's config from plain values, or a one-line error naming the offending field."""
    try:
        return model.model_validate(values)
    except ValidationError as exc:
        raise CoworkEnvError(format_validation_error(exc, where)) from None


def evaluation_config(values: dict[str, Any], where: str = "") -> EvaluationConfig:
    return validated_config(EvaluationConfig, values, where)


def synthesis_config(values: dict[str, Any], where: str = "") -> SynthesisConfig:
    return validated_config(SynthesisConfig, values, where)


def nightly_config(values: dict[str, Any], where: str = "") -> NightlyConfig:
    return validated_config(NightlyConfig, values, where)


def read_config_file(path: str | Path) -> dict[str, Any]:
    """The mapping in a YAML (or JSON) config file."""
    import yaml

    path = Path(path)
    text = read_text(path)
    try:
        data = yaml.safe_load(text)
    except (yaml.YAMLError, RecursionError, ValueError) as exc:  # ValueError: an integer of more than 4,300 digits
        raise CoworkEnvError(f"{path}: not valid YAML: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise CoworkEnvError(f"{path}: expected a mapping of settings, got {type(data).__name__}")
    return data
