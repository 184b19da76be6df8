"""The DPO job (docs/design/training.md, "Training"): TRL's `DPOTrainer` on preference pairs the environment graded — per
task, a passing and a failing continuation of the same prompt from an evaluation of the model on training tasks
(`rollout/pairs.py`). One config model (`DPOJobConfig`: the Python API, the CLI flags and the YAML file), one entry
point (`train_dpo`). The checkpoint folder gets the model and tokenizer, `training.json` (the config, the evaluation,
the base model, the code version, the pairs, every logged metric) and `curves.png` (loss, reward margin and accuracy).

A continuation holds the environment's tokens too (tool results, the simulated user's replies). By default only the
assistant's tokens count in the log-probabilities DPO compares (`assistant_only_loss`, the chat template's generation
markers): the policy chose those; scoring the others would push the model to predict workspace contents.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ConfigDict, Field

from coworkenv.errors import CoworkEnvError
from coworkenv.train.checkpoint import (
    SCRATCH_DIR,
    SEED_MAX,
    TuningFields,
    check_chat_template,
    check_model_dir,
    check_out,
    curves_png,
    finite_losses,
    logged,
    logging_interval,
    save_checkpoint,
    step_callback,
)

if TYPE_CHECKING:
    from coworkenv.rollout.pairs import PairSet

CURVES = {"loss": "training loss", "rewards/margins": "reward margin", "rewards/accuracies": "reward accuracy"}


class DPOJobConfig(TuningFields):
    """Direct preference optimization on environment-graded pairs from an evaluation on training tasks."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str = Field(
        min_length=1, description="Model directory to start from (local files only); also the frozen reference model."
    )
    release: str = Field(
        min_length=1,
        description="The evaluation whose trials become pairs: a release of kind eval of the model on training tasks, or its run id if unpublished.",
    )
    out: str = Field(min_length=1, description="Checkpoint directory to write (must be empty or absent).")
    beta: float = Field(
        0.1, gt=0, le=100.0, description="DPO's β: how far the policy may move from the reference (higher: less)."
    )
    # A pass (≥ 0.75) against a failure just under it is a near tie the grader barely separates: not a preference.
    min_score_gap: float = Field(
        0.25,
        ge=0,
        le=1.0,
        description="Pair a task only when the chosen trial outscores the rejected one by at least this.",
    )
    max_steps: int = Field(100, ge=1, le=1_000_000, description="Optimizer steps.")
    batch_size: int = Field(2, ge=1, le=4096, description="Pairs per device and step.")
    gradient_accumulation_steps: int = Field(1, ge=1, le=1024, description="Batches accumulated per optimizer step.")
    learning_rate: float = Field(
        1e-3,
        gt=0,
        le=1.0,
        description="Peak learning rate (1e-3 suits the tiny model; about 5e-7 suits billion-parameter models).",
    )
    warmup_steps: int = Field(5, ge=0, description="Linear warm-up steps before the cosine decay.")
    max_length: int = Field(
        2048,
        ge=64,
        le=1_048_576,
        description="Tokens per prompt and continuation; longer ones lose their end, a prompt this long drops its pair.",
    )
    assistant_only_loss: bool = Field(
        True,
        description="Compare log-probabilities of the assistant's tokens only, not of tool results and user replies (generation markers).",
    )
    logging_steps: int = Field(
        5, ge=1, description="Log the loss and rewards every this many steps (the curves and training.json)."
    )
    seed: int = Field(
        0, ge=0, le=SEED_MAX, description="Seed of the data order: the same settings give the same checkpoint on CPU."
    )
    use_cpu: bool | None = Field(
        None, description="Train on the CPU even where a GPU is visible (default: a GPU when there is one)."
    )


def pair_tokens(pairs: PairSet, tokenizer: Any) -> list[dict[str, Any]]:
    """Per pair: the tokens of its prompt (with the generation prompt), and the assistant-token masks of prompt+chosen
    and prompt+rejected as the chat template renders them (TRL's tokenization: the same call, the same ids)."""
    out = []
    for pair in pairs.pairs:
        tools = json.loads(pair.tools)
        prompt = tokenizer.apply_chat_template(
            pair.prompt, tools=tools, add_generation_prompt=True, tokenize=True, return_dict=True
        )
        masks = {}
        for side in ("chosen", "rejected"):
            rendered = tokenizer.apply_chat_template(
                pair.prompt + getattr(pair, side),
                tools=tools,
                tokenize=True,
                return_dict=True,
                return_assistant_tokens_mask=True,
            )
            masks[side] = list(rendered["assistant_masks"])
            if not any(masks[side][len(prompt["input_ids"]) :]):
                raise CoworkEnvError(
                    f"pair of task {pair.task_id}: the chat template marks none of the {side} continuation as the "
                    "assistant's ({% generation %}); train with assistant_only_loss false"
                )
        out.append(
            {
                "prompt_tokens": len(prompt["input_ids"]),
                "chosen_mask": masks["chosen"],
                "rejected_mask": masks["rejected"],
            }
        )
    return out


def dpo_dataset(pairs: PairSet, tokens: list[dict[str, Any]], *, assistant_only: bool) -> Any:
    """TRL's conversational preference rows (prompt, chosen, rejected, tools as a JSON string), with the assistant masks
    when the loss is on assistant tokens only."""
    import datasets

    rows = []
    for pair, t in zip(pairs.pairs, tokens, strict=True):
        row = {"prompt": pair.prompt, "chosen": pair.chosen, "rejected": pair.rejected, "tools": pair.tools}
        if assistant_only:
            row.update(chosen_mask=t["chosen_mask"], rejected_mask=t["rejected_mask"])
        rows.append(row)
    return datasets.Dataset.from_list(rows)


def assistant_only_collator(pad_token_id: int, max_length: int | None) -> Any:
    """TRL's preference collator, its completion mask narrowed to the assistant's tokens."""
    import torch
    from trl.trainer.dpo_trainer import DataCollatorForPreference

    class AssistantOnly(DataCollatorForPreference):
        def torch_call(self, examples: list[dict[str, Any]]) -> dict[str, Any]:
            batch = super().torch_call(examples)
            keep = torch.zeros_like(batch["completion_mask"])
            sides = [(e, "chosen") for e in examples] + [(e, "rejected") for e in examples]
            for row, (example, side) in enumerate(sides):
                mask = example[f"{side}_mask"]
                if len(mask) != len(example["prompt_ids"]) + len(example[f"{side}_ids"]):
                    raise CoworkEnvError(
                        f"the {side} continuation tokenized to {len(example[f'{side}_ids'])} tokens after a "
                        f"{len(example['prompt_ids'])}-token prompt, but its assistant mask has {len(mask)}"
                    )
                mask = mask[: self.max_length] if self.max_length is not None else mask
                keep[row, : len(mask)] = torch.tensor(mask, dtype=keep.dtype)
            batch["completion_mask"] = batch["completion_mask"] * keep
            return batch

    return AssistantOnly(pad_token_id=pad_token_id, max_length=max_length)


def train_dpo(
    config: DPOJobConfig,
    data_root: Any = None,
    *,
    pairs: PairSet | None = None,
    progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Train, save the checkpoint with its record and curves; returns the record (`training.json`). `pairs`: already
    built (an evaluation run's, by `pipeline.training_data.eval_pairs`); default: those of the evaluation release
    `config.release`."""
    from transformers import AutoModelForCausalLM, PrinterCallback
    from trl import DPOConfig, DPOTrainer

    from coworkenv.agents.hf import load_causal_lm, quiet_transformers
    from coworkenv.data.publisher import code_version
    from coworkenv.fileio import staged
    from coworkenv.rollout.pairs import release_pairs

    base, out = Path(config.model), Path(config.out)
    check_model_dir(base)
    check_out(out)
    if pairs is None:
        pairs = release_pairs(data_root, config.release, min_score_gap=config.min_score_gap)
    if not pairs.pairs:
        why = ", ".join(f"{reason} {n}" for reason, n in pairs.skipped.items()) or "no usable trials"
        raise CoworkEnvError(f"evaluation {pairs.source}: no preference pairs from its {pairs.tasks} task(s) ({why})")
    tokenizer, model = load_causal_lm(base, str(base))
    check_chat_template(tokenizer, base, assistant_mask=config.assistant_only_loss)
    reference = None  # with LoRA, TRL takes the model with its adapter off as the reference: no second copy
    if config.lora_rank == 0:
        with quiet_transformers():
            reference = AutoModelForCausalLM.from_pretrained(base, local_files_only=True)
    tokenizer.pad_token = tokenizer.pad_token or tokenizer.eos_token
    tokens = pair_tokens(pairs, tokenizer)
    if all(t["prompt_tokens"] >= config.max_length for t in tokens):
        shortest = min(t["prompt_tokens"] for t in tokens)
        raise CoworkEnvError(
            f"every prompt is at least max_length {config.max_length} tokens (the shortest: {shortest}); raise --max-length"
        )
    dataset = dpo_dataset(pairs, tokens, assistant_only=config.assistant_only_loss)
    collator = (
        assistant_only_collator(tokenizer.pad_token_id, config.max_length) if config.assistant_only_loss else None
    )
    log_every = logging_interval(config.logging_steps, config.max_steps)
    with staged(out, folder=True) as tmp:
        args = DPOConfig(
            output_dir=str(tmp / SCRATCH_DIR),
            max_steps=config.max_steps,
            per_device_train_batch_size=config.batch_size,
            gradient_accumulation_steps=config.gradient_accumulation_steps,
            learning_rate=config.learning_rate,
            beta=config.beta,
            warmup_steps=config.warmup_steps,
            lr_scheduler_type="cosine",
            max_length=config.max_length,
            seed=config.seed,
            logging_steps=log_every,
            bf16=config.bf16,
            report_to=[],
            save_strategy="no",
            dataloader_num_workers=0,
            disable_tqdm=True,
            use_cpu=bool(config.use_cpu),
            remove_unused_columns=not config.assistant_only_loss,
            gradient_checkpointing=config.gradient_checkpointing,
        )
        with quiet_transformers():  # TRL's tokenizing passes show bars of their own
            trainer = DPOTrainer(
                model=model,
                ref_model=reference,
                args=args,
                data_collator=collator,
                train_dataset=dataset,
                processing_class=tokenizer,
                callbacks=[step_callback(progress)],
                peft_config=config.lora(),
            )
        trainer.remove_callback(PrinterCallback)  # it prints every log dict; the caller shows progress its own way
        start = time.perf_counter()
        result = trainer.train()
        seconds = time.perf_counter() - start
        history = [dict(entry) for entry in trainer.state.log_history]
        losses = finite_losses(history)
        accuracies, margins = logged(history, "rewards/accuracies"), logged(history, "rewards/margins")
        steps = trainer.state.global_step
        record = {
            "job": "dpo",
            "config": config.model_dump(mode="json"),
            "release_id": pairs.source,
            "base_model": str(base),
            "code_version": code_version(),
            "pairs": len(pairs.pairs),
            "oracle_chosen": pairs.oracle_chosen,
            "tasks": pairs.tasks,
            "skipped": pairs.skipped,
            "mean_gap": pairs.mean_gap,
            "trained_pairs": trainer.train_dataset.num_rows,
            "truncated_pairs": sum(
                1 for t in tokens if max(len(t["chosen_mask"]), len(t["rejected_mask"])) > config.max_length
            ),
            "steps": steps,
            "train_loss": result.training_loss,
            "first_loss": losses[0],
            "last_loss": losses[-1],
            "first_reward_accuracy": accuracies[0],
            "last_reward_accuracy": accuracies[-1],
            "first_reward_margin": margins[0],
            "last_reward_margin": margins[-1],
            "seconds": round(seconds, 2),
            "seconds_per_step": round(seconds / max(steps, 1), 3),
            "log_history": history,
        }
        title = f"DPO of {base.name} on {pairs.source} ({len(pairs.pairs)} pairs, β {config.beta:g})"
        save_checkpoint(tmp, trainer, tokenizer, record, curves_png(history, title=title, series=CURVES))
    return record
