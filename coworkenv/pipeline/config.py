"""The synthesis job's configuration: one pydantic model whose fields carry their help text.

It is the single source of the `coworkenv synthesize` options (and `coworkenv generate`'s), of a YAML file given
with `--config run.yaml`, and of the trigger form of the `coworkenv_synthesize` DAG (its Params are generated from
this model): a new field appears in all three at once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar, Literal, Self, TypeVar

from pydantic import BaseModel, Field, ValidationError, ValidationInfo, field_validator, model_validator

from coworkenv.caps import CAPS
from coworkenv.data.layout import DEFAULT_LINEAGE
from coworkenv.errors import CoworkEnvError, field_label, format_settings_error
from coworkenv.fileio import parse_yaml, read_text
from coworkenv.pipeline.nightly_config import NightlyConfig
from coworkenv.pipeline.settings import (
    LLM_ENDPOINT,
    RECORDED,
    VALIDATION,
    EndpointSettings,
    checks_files,
    form_section,
    need_endpoint,
    published_suite_exists,
    runtime_field,
)
from coworkenv.sandbox.choices import RuntimeChoice
from coworkenv.synth.generate import GENERATION, WHAT_TO_MAKE, GenerateRequest

__all__ = [
    "LLM_ENDPOINT",
    "RECORDED",
    "VALIDATION",
    "EndpointSettings",
    "EvaluationConfig",
    "NightlyConfig",
    "SynthesisConfig",
    "checks_files",
    "evaluation_config",
    "form_order",
    "need_endpoint",
    "nightly_config",
    "read_config_file",
    "runtime_field",
    "synthesis_config",
    "validated_config",
]


class SynthesisConfig(EndpointSettings, GenerateRequest):
    """What a synthesis run makes: plan → generate → validate → repair → rollout → build → gate → publish. The fields
    of what to generate come from `GenerateRequest`; these add the endpoint (for LLM generation and LLM repair),
    repair, sandbox and sharding settings."""

    form_sections: ClassVar[tuple[str, ...]] = (WHAT_TO_MAKE, GENERATION, VALIDATION, LLM_ENDPOINT)

    lineage: str = Field(
        DEFAULT_LINEAGE,
        min_length=1,
        max_length=100,
        pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$",
        title="Release line",
        description="The line of releases this run's release continues: its parent is the newest release of the same "
        "line (the nightly loop's training releases are the line nightly-<model name>).",
        json_schema_extra=form_section(WHAT_TO_MAKE),
    )
    repair_rounds: int = Field(
        3,
        ge=0,
        le=10,
        title="Repair rounds",
        description="Repair rounds before a task is rejected (0-10).",
        json_schema_extra=form_section(VALIDATION),
    )
    workers: int = Field(
        2,
        ge=1,
        le=64,
        title="Sandbox workers",
        description="Sandboxed workers per shard (validation, repair, rollouts).",
        json_schema_extra=form_section(VALIDATION),
    )
    runtime: RuntimeChoice = runtime_field(VALIDATION)
    task_budget_s: float | None = Field(
        None,
        gt=0,
        le=86_400,
        title="Task budget",
        description="Wall-clock seconds one task may take in a sandboxed stage (validate, repair, rollout); over it, the task fails "
        "with sandbox_timeout and the rest of the batch goes on. Default: each job's own budget (validation 5 s; repair and rollout 60 s).",
        json_schema_extra=form_section(VALIDATION),
    )
    shards: int = Field(
        2,
        ge=1,
        le=256,
        title="Shards",
        description="Generation and validation shards (mapped tasks in Airflow).",
        json_schema_extra=form_section(GENERATION),
    )
    profile: str | None = Field(
        None,
        title="Capability profile",
        json_schema_extra=form_section(WHAT_TO_MAKE),
        description="Capability profile JSON file to plan from (default: cold start).",
    )

    @field_validator("profile")
    @classmethod
    def _profile_parses(cls, path: str | None, info: ValidationInfo) -> str | None:
        if path is not None and checks_files(info):
            from coworkenv.spec.capabilities import CapabilityProfile
            from coworkenv.spec.io import load_model

            if (
                Path(path).exists() and not Path(path).is_file()
            ):  # a folder, a FIFO or a device: never read one (it may block)
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
        "oracle",
        title="Agent",
        min_length=1,
        json_schema_extra=form_section(WHAT_TO_EVALUATE, choices="agents"),
        description="The agent: oracle, null, random, hf:<model dir>, or openai:<model> (at the endpoint below).",
    )
    suite: str = Field(
        "bench",
        title="Suite",
        min_length=1,
        json_schema_extra=form_section(WHAT_TO_EVALUATE, choices="suites"),
        description="What to evaluate on: a release id, `bench` (the newest coworkenv-bench release), or a .jsonl file of TaskSpecs.",
    )
    trials: int = Field(
        3,
        ge=1,
        le=32,
        title="Trials",
        description="Trials per task (k of pass@k and pass^k; 1-32).",
        json_schema_extra=form_section(WHAT_TO_EVALUATE),
    )
    limit: int | None = Field(
        None,
        ge=1,
        le=CAPS.tasks_per_run,
        title="Task limit",
        description="Evaluate only the suite's first N tasks.",
        json_schema_extra=form_section(WHAT_TO_EVALUATE),
    )
    workers: int = Field(
        2,
        ge=1,
        le=64,
        title="Workers",
        description="Processes for local agents (oracle, null, random).",
        json_schema_extra=form_section(EPISODES),
    )
    runtime: RuntimeChoice = runtime_field(EPISODES)
    batch_size: int = Field(
        48,
        ge=1,
        le=512,
        title="Batch size",
        json_schema_extra=form_section(EPISODES),
        description="Episodes in flight for a local model (hf: agents): 48 keeps 16 tasks × 3 trials together, whose "
        "greedy replies are computed once while they agree.",
    )
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = Field(
        "auto",
        title="Dtype",
        json_schema_extra=form_section(EPISODES),
        description="Weights' dtype of a local model (hf: agents; auto: the checkpoint's); on a CPU bfloat16 prefills faster, decodes slower.",
    )
    max_new_tokens: int | None = Field(
        None,
        ge=1,
        le=32_768,
        title="Max new tokens",
        json_schema_extra=form_section(EPISODES),
        description="Reply length limit of a model agent per turn, in tokens (hf: new tokens; openai: the request's max_tokens). "
        "Default: the model's generation config, else 256 (hf:); the endpoint settings' 6000 (openai:).",
    )
    temperature: float = Field(
        0.0,
        ge=0.0,
        le=2.0,
        title="Temperature",
        description="Sampling temperature of model agents (0-2; 0: greedy).",
        json_schema_extra=form_section(EPISODES),
    )
    max_turns: int | None = Field(
        None,
        ge=1,
        le=10_000,
        title="Turn limit",
        description="Assistant turns per episode (default: enough for the task's solution).",
        json_schema_extra=form_section(EPISODES),
    )
    episode_wall_s: float = Field(
        600.0,
        gt=0,
        le=86_400,
        title="Episode time limit",
        json_schema_extra=form_section(EPISODES),
        description="Seconds per episode; over it, the trial fails. For hf: agents it counts the episode's own time (its "
        "replies, tool calls and user replies), not its wait while the rest of its batch is generated; for the others, "
        "wall-clock time. The default suits a small local model on a CPU: about 20 tokens/s gives a 256-token reply in "
        "about 13 s, ten turns about 200 s, and 600 s leaves three times that.",
    )
    user: Literal["scripted", "llm"] = Field(
        "scripted",
        title="Simulated user",
        json_schema_extra=form_section(EPISODES),
        description="The simulated user of multi-turn tasks: the spec's scripted rules, or an LLM persona at the endpoint "
        "(it reveals only the spec's facts, in their order).",
    )
    seed: int = Field(
        0,
        ge=0,
        title="Seed",
        json_schema_extra=form_section(WHAT_TO_EVALUATE),
        description="Seed of sampling agents and the bootstrap: the same settings give the same results where the agent is deterministic.",
    )
    train_releases: list[str] | None = Field(
        None,
        title="Training releases",
        json_schema_extra=form_section(CONTAMINATION, choices="task_releases"),
        description="Task releases the model was trained on, for the contamination check (default: the LATEST task release, if any).",
    )
    contamination_threshold: float = Field(
        0.8,
        gt=0.0,
        le=1.0,
        title="Near-duplicate threshold",
        json_schema_extra=form_section(CONTAMINATION),
        description="Instruction similarity (MinHash Jaccard, up to 1) at which a suite task counts as a near-duplicate of a training task.",
    )
    max_contaminated_share: float = Field(
        0.0,
        ge=0.0,
        le=1.0,
        title="Allowed contamination",
        json_schema_extra=form_section(CONTAMINATION),
        description="Share of suite tasks (0-1) that may match training tasks before the evaluation refuses to run.",
    )

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
        """A suite file must be there (a published suite: `_suite_is_published`)."""
        if suite.endswith(".jsonl") and checks_files(info) and not Path(suite).is_file():
            raise ValueError(f"{suite}: no such file")
        return suite

    @model_validator(mode="after")
    def _suite_is_published(self, info: ValidationInfo) -> Self:
        """After the fields (the default `bench` too, which a field validator never sees)."""
        published_suite_exists(field_label(type(self), "suite"), self.suite, info)
        return self

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


def form_order(model: type[BaseModel]) -> list[str]:
    """The model's fields in the order of its form: section by section (`form_sections`), field order within one."""
    sections: tuple[str, ...] = getattr(model, "form_sections", ())
    props = model.model_json_schema()["properties"]

    def rank(name: str) -> int:
        section = props[name].get("section")
        return sections.index(section) if section in sections else len(sections)

    return sorted(model.model_fields, key=rank)


C = TypeVar("C", bound=BaseModel)


def validated_config(
    model: type[C], values: dict[str, Any], where: str = "", recorded: bool = False, data_root: Any = None
) -> C:
    """A job's config from plain values, or a one-line error in the words of its trigger form (the field's title and
    key). `recorded`: the config a run wrote when it started (the files it names are not checked again). `data_root`:
    the data root the run will read, where the releases a setting names are looked up (a suite)."""
    context = RECORDED if recorded else ({"data_root": data_root} if data_root is not None else None)
    try:
        return model.model_validate(values, context=context)
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
