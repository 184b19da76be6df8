"""The RL job (docs/design/training.md, "Training"): TRL's `GRPOTrainer` on a release's `rl` rows, rewarded by what the
model's tool calls do in each task's workspace. One config model (`RLJobConfig`: the Python API, the CLI flags and
the YAML file), one entry point (`train_rl`). Episodes are played by our rollout function (`train/rl_rollout.py`), the
four rewards (`train/rewards.py`) are logged apart, and the method picks how TRL combines them: `grpo` sums the
weighted rewards and then normalizes the sum within each group, `gdpo` normalizes each reward within its group and
then sums them. The checkpoint folder gets the model and tokenizer, `training.json` and `curves.png`.
"""

from __future__ import annotations

import json
import math
import shutil
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import ConfigDict, Field, model_validator

from coworkenv.errors import CoworkEnvError
from coworkenv.spec.task import TaskSpec
from coworkenv.train.checkpoint import (
    CURVES_FILE,
    SEED_MAX,
    TRAINING_FILE,
    TuningFields,
    check_chat_template,
    check_model_dir,
    check_out,
    curves_png,
    metric_curve,
    save_model,
)
from coworkenv.train.rewards import REWARDS

AGGREGATION = {"grpo": "sum_then_normalize", "gdpo": "normalize_then_sum"}
"""Method → TRL's `multi_objective_aggregation`."""


class RLJobConfig(TuningFields):
    """GRPO / GDPO on a release's `rl` rows, rewarded in the tasks' workspaces."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str = Field(
        min_length=1, description="Model directory to start from (local files only), e.g. an SFT checkpoint."
    )
    release: str = Field(
        "latest", min_length=1, description="Release whose `rl` table to train on (`latest`: the newest task release)."
    )
    out: str = Field(min_length=1, description="Checkpoint directory to write (must be empty or absent).")
    method: Literal["grpo", "gdpo"] = Field(
        "grpo",
        description="grpo: sum the weighted rewards, then normalize the sum in each group; gdpo: normalize each reward in its group, then sum.",
    )
    max_steps: int = Field(50, ge=1, le=1_000_000, description="Optimizer steps.")
    num_generations: int = Field(
        4, ge=2, le=1024, description="Episodes per task in a group (the rewards are compared within it)."
    )
    batch_size: int = Field(
        8,
        ge=2,
        le=4096,
        description="Episodes per device and step; a multiple of num_generations (batch_size / num_generations tasks a step).",
    )
    gradient_accumulation_steps: int = Field(1, ge=1, le=1024, description="Batches accumulated per optimizer step.")
    learning_rate: float = Field(
        1e-4,
        gt=0,
        le=1.0,
        description="Learning rate (1e-4 suits the tiny model, which 1e-3 unlearns to end its turns; about 1e-6 suits 1B models).",
    )
    beta: float = Field(
        0.0, ge=0, le=100.0, description="KL penalty against the starting model (0: no reference model is kept)."
    )
    max_completion_length: int = Field(
        256,
        ge=8,
        le=131_072,
        description="Tokens per episode after the prompt: every assistant turn and every tool result or user reply together.",
    )
    max_turns: int = Field(8, ge=1, le=1024, description="Assistant turns per episode (each may call several tools).")
    temperature: float = Field(1.0, gt=0, le=10.0, description="Sampling temperature of the episodes.")
    completion_weight: float = Field(
        1.0, ge=0, le=100.0, description="Weight of the completion reward (the share of the task's checks that hold)."
    )
    safety_weight: float = Field(
        1.0, ge=0, le=100.0, description="Weight of the safety reward (0 when a prohibited rule was broken)."
    )
    robustness_weight: float = Field(
        0.5, ge=0, le=100.0, description="Weight of the robustness reward (recovery from tool errors)."
    )
    format_weight: float = Field(
        0.5,
        ge=0,
        le=100.0,
        description="Weight of the format reward (the share of turns that parse as tool calls or an answer).",
    )
    logging_steps: int = Field(
        1, ge=1, description="Log rewards and loss every this many steps (the curves and training.json)."
    )
    seed: int = Field(
        0,
        ge=0,
        le=SEED_MAX,
        description="Seed of the data order and the sampling: the same settings give the same checkpoint on CPU.",
    )
    use_cpu: bool | None = Field(
        None, description="Train on the CPU even where a GPU is visible (default: a GPU when there is one)."
    )

    @model_validator(mode="after")
    def _consistent(self) -> RLJobConfig:
        if self.batch_size % self.num_generations:
            raise ValueError(
                f"batch_size ({self.batch_size}) must be a multiple of num_generations ({self.num_generations})"
            )
        if not any(self.weights().values()):
            raise ValueError("at least one reward weight must be above 0")
        if self.logging_steps > self.max_steps:
            raise ValueError(
                f"logging_steps ({self.logging_steps}) is above max_steps ({self.max_steps}): no reward would be logged"
            )
        return self

    def weights(self) -> dict[str, float]:
        """Reward name → weight, in `REWARDS` order."""
        return {name: getattr(self, f"{name}_weight") for name in REWARDS.names()}


def rl_dataset(data_root: Any, release: str) -> tuple[Any, dict[str, TaskSpec], str]:
    """The release's `rl` rows as a `datasets.Dataset` (the prompt tagged with its task, `rollout.tag_prompt`), their
    specs by task id, and the release id."""
    import datasets

    from coworkenv.data.build import spec_from_row
    from coworkenv.data.reader import read_manifest, read_table
    from coworkenv.train.rl_rollout import tag_prompt

    manifest = read_manifest(data_root, release)
    table = read_table(data_root, manifest.release_id, "rl", columns=["prompt", "task_id", "spec_json"])
    if table.num_rows == 0:
        raise CoworkEnvError(f"release {manifest.release_id} has no rl rows to train on")
    rows, specs = [], {}
    for row in table.to_pylist():
        specs[row["task_id"]] = spec_from_row(row)
        rows.append({"prompt": tag_prompt(row["prompt"], row["task_id"]), "task_id": row["task_id"]})
    return datasets.Dataset.from_list(rows), specs, manifest.release_id


def _fitting(dataset: Any, specs: dict[str, TaskSpec], tokenizer: Any, context: int, room: int) -> Any:
    """The rows whose prompt leaves `room` tokens for the episode in the model's `context`."""
    from coworkenv.train.rl_rollout import prompt_ids, untag_prompt

    def fits(row: dict[str, Any]) -> bool:
        task_id, messages = untag_prompt(row["prompt"])
        return len(prompt_ids(tokenizer, messages, specs[task_id].tool_schemas)) + room <= context

    return dataset.select([i for i, row in enumerate(dataset) if fits(row)])


def reward_curves(history: list[dict[str, Any]]) -> dict[str, list[tuple[int, float]]]:
    """(step, mean) of the total reward and of each reward, from TRL's log history."""
    return {
        "reward": metric_curve(history, "reward"),
        **{name: metric_curve(history, f"rewards/{name}/mean") for name in REWARDS.names()},
    }


def train_rl(
    config: RLJobConfig, data_root: Any = None, *, progress: Callable[[int], None] | None = None
) -> dict[str, Any]:
    """Train, save the checkpoint with its record and curves; returns the record (`training.json`)."""
    from transformers import PrinterCallback, TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    from coworkenv.agents.hf import load_causal_lm, quiet_transformers
    from coworkenv.data.publisher import code_version
    from coworkenv.fileio import staged
    from coworkenv.train.rl_rollout import rollout_function

    base, out = Path(config.model), Path(config.out)
    check_model_dir(base)
    check_out(out)
    dataset, specs, release_id = rl_dataset(data_root, config.release)

    class Progress(TrainerCallback):
        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            if progress is not None:
                progress(1)

    tokenizer, model = load_causal_lm(base, str(base), dtype="float32")
    check_chat_template(tokenizer, base, assistant_mask=False)
    rows = dataset.num_rows
    context = min(getattr(model.config, "max_position_embeddings", None) or 10**9, tokenizer.model_max_length or 10**9)
    dataset = _fitting(dataset, specs, tokenizer, context, config.max_completion_length)
    if dataset.num_rows == 0:
        room = config.max_completion_length
        raise CoworkEnvError(
            f"no rl row of release {release_id} leaves max_completion_length ({room}) tokens in the model's context"
        )
    weights = config.weights()
    with staged(out, folder=True) as tmp:
        args = GRPOConfig(
            output_dir=str(tmp / "trainer"),
            max_steps=config.max_steps,
            per_device_train_batch_size=config.batch_size,
            gradient_accumulation_steps=config.gradient_accumulation_steps,
            learning_rate=config.learning_rate,
            num_generations=config.num_generations,
            max_completion_length=config.max_completion_length,
            temperature=config.temperature,
            beta=config.beta,
            reward_weights=list(weights.values()),
            multi_objective_aggregation=AGGREGATION[config.method],
            seed=config.seed,
            logging_steps=config.logging_steps,
            bf16=config.bf16,
            report_to=[],
            save_strategy="no",
            dataloader_num_workers=0,
            disable_tqdm=True,
            use_cpu=bool(config.use_cpu),
            gradient_checkpointing=config.gradient_checkpointing,
        )
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*rollout_func.*experimental", category=UserWarning)
            trainer = GRPOTrainer(
                model=model,
                reward_funcs=[REWARDS.get(name) for name in weights],
                args=args,
                train_dataset=dataset,
                processing_class=tokenizer,
                callbacks=[Progress()],
                rollout_func=rollout_function(specs, max_turns=config.max_turns),
                peft_config=config.lora(),
            )
        trainer.remove_callback(PrinterCallback)  # it prints every log dict; the caller shows progress its own way
        start = time.perf_counter()
        result = trainer.train()
        seconds = time.perf_counter() - start
        history = [dict(entry) for entry in trainer.state.log_history]
        losses = [e["loss"] for e in history if "loss" in e]
        if not losses or not all(math.isfinite(x) for x in losses):
            raise CoworkEnvError(f"training diverged: losses {losses[:5]}")
        save_model(tmp, trainer)
        with quiet_transformers():
            tokenizer.save_pretrained(str(tmp))
        shutil.rmtree(tmp / "trainer", ignore_errors=True)  # the trainer's scratch folder: not part of the checkpoint
        curves = reward_curves(history)
        steps = trainer.state.global_step
        record = {
            "job": config.method,
            "config": config.model_dump(mode="json"),
            "release_id": release_id,
            "base_model": str(base),
            "code_version": code_version(),
            "rows": dataset.num_rows,
            "rows_too_long": rows - dataset.num_rows,
            "steps": steps,
            "aggregation": AGGREGATION[config.method],
            "reward_weights": weights,
            "train_loss": result.training_loss,
            "first_reward": curves["reward"][0][1] if curves["reward"] else None,
            "last_reward": curves["reward"][-1][1] if curves["reward"] else None,
            "curves": {name: [[step, value] for step, value in points] for name, points in curves.items()},
            "seconds": round(seconds, 2),
            "seconds_per_step": round(seconds / max(steps, 1), 3),
            "log_history": history,
        }
        (tmp / TRAINING_FILE).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
        series = {"reward": "total reward (weighted)", **{f"rewards/{name}/mean": name for name in REWARDS.names()}}
        title = f"{config.method.upper()} of {base.name} on {release_id}"
        (tmp / CURVES_FILE).write_bytes(
            curves_png(history, title=title, series=series, twin=("loss", "loss"), ylabel="mean reward")
        )
    return record
