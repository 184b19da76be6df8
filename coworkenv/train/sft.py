"""The SFT job (docs/design/training.md, "Training"): TRL's `SFTTrainer` on a release's `sft` table — tool-call
conversations (the oracle's trajectories, or a model's own rejection-sampled successes), loss on assistant tokens
only. One config model (`SFTJobConfig`: the Python API, the CLI flags and the YAML file), one entry point
(`train_sft`). The checkpoint folder gets the model and tokenizer, `training.json` (the config, the release, the base
model, the code version, every logged metric) and `curves.png`.
"""

from __future__ import annotations

import json
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import ConfigDict, Field

from coworkenv.errors import CoworkEnvError
from coworkenv.train.checkpoint import (
    CURVES_FILE,
    SCRATCH_DIR,
    SEED_MAX,
    TRAINING_FILE,
    TuningFields,
    check_chat_template,
    check_model_dir,
    check_out,
    curves_png,
    finite_losses,
    logging_interval,
    read_training,
    save_checkpoint,
    snapshot_callback,
    staged_checkpoint,
    step_callback,
    trained_tokens,
)

__all__ = ["CURVES_FILE", "TRAINING_FILE", "SFTJobConfig", "read_training", "sft_dataset", "train_sft"]


class SFTJobConfig(TuningFields):
    """Supervised fine-tuning on a release's `sft` rows."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str = Field(
        min_length=1, description="Model directory to start from (local files only), e.g. the tiny model."
    )
    release: str = Field(
        "latest", min_length=1, description="Release whose `sft` table to train on (`latest`: the newest task release)."
    )
    out: str = Field(min_length=1, description="Checkpoint directory to write (must be empty or absent).")
    extra_sft: list[str] = Field(
        [],
        description="Parquet files of more `sft` rows to train on, e.g. a model's own successes from `coworkenv eval sft`.",
    )
    max_steps: int = Field(100, ge=1, le=1_000_000, description="Optimizer steps.")
    batch_size: int = Field(4, ge=1, le=4096, description="Conversations per device and step.")
    gradient_accumulation_steps: int = Field(1, ge=1, le=1024, description="Batches accumulated per optimizer step.")
    learning_rate: float = Field(
        3e-3,
        gt=0,
        le=1.0,
        description="Peak learning rate (3e-3 suits the tiny model; about 1e-5 suits billion-parameter models).",
    )
    warmup_steps: int = Field(5, ge=0, description="Linear warm-up steps before the cosine decay.")
    max_length: int = Field(2048, ge=64, le=1_048_576, description="Tokens per conversation (see long_conversations).")
    long_conversations: Literal["cut", "drop"] = Field(
        "cut",
        description="A conversation over max_length: cut after its last whole assistant turn that fits, or drop it (rows then end on answers).",
    )
    logging_steps: int = Field(
        10, ge=1, description="Log the loss every this many steps (the curves and training.json)."
    )
    snapshot_steps: list[int] = Field(
        [],
        description="Also save the whole model after these steps, into snapshots/step-N/ of the checkpoint (a learning curve's points).",
    )
    seed: int = Field(
        0,
        ge=0,
        le=SEED_MAX,
        description="Seed of the data order and dropout: the same settings give the same checkpoint on CPU.",
    )
    assistant_only_loss: bool = Field(True, description="Loss on assistant tokens only (the chat template marks them).")
    packing: bool = Field(
        False,
        description="Pack conversations into rows of max_length tokens (padding-free, each attending only to itself): no padding to compute.",
    )
    use_cpu: bool | None = Field(
        None, description="Train on the CPU even where a GPU is visible (default: a GPU when there is one)."
    )


def sft_rows(data_root: Any, release: str, extra: list[str] | tuple[str, ...] = ()) -> tuple[list[dict[str, Any]], str]:
    """The release's `sft` rows and those of the `extra` Parquet files (`messages`, `tools` parsed from their JSON
    string), and the release id."""
    import pyarrow.parquet as pq

    from coworkenv.data.reader import read_manifest, read_table

    manifest = read_manifest(data_root, release)
    tables = [read_table(data_root, manifest.release_id, "sft", columns=["messages", "tools"])]
    for path in extra:
        try:
            tables.append(pq.read_table(path, columns=["messages", "tools"]))
        except (OSError, ValueError, KeyError) as exc:  # pyarrow raises ArrowInvalid (a ValueError) for a non-sft file
            raise CoworkEnvError(f"{path}: not a Parquet file of sft rows ({str(exc).splitlines()[0]})") from None
    rows = [{"messages": r["messages"], "tools": json.loads(r["tools"])} for t in tables for r in t.to_pylist()]
    if not rows:
        raise CoworkEnvError(f"release {manifest.release_id} has no sft rows to train on")
    for row in rows:  # TRL renders messages as given: drop the columns the release fills with nulls
        row["messages"] = [{k: v for k, v in m.items() if v is not None} for m in row["messages"]]
    return rows, manifest.release_id


def sft_dataset(data_root: Any, release: str, extra: list[str] | tuple[str, ...] = ()) -> tuple[Any, str]:
    """`sft_rows` as a `datasets.Dataset`."""
    import datasets

    rows, release_id = sft_rows(data_root, release, extra)
    return datasets.Dataset.from_list(rows), release_id


def check_sft_inputs(config: SFTJobConfig, data_root: Any = None) -> None:
    """The job's inputs, before any work (`--profile` checks them before it launches): the model folder, the
    checkpoint folder, the release."""
    from coworkenv.data.reader import read_manifest

    check_model_dir(Path(config.model))
    check_out(Path(config.out))
    read_manifest(data_root, config.release)


def _trainer_class() -> Any:
    """TRL's `SFTTrainer` with a loss that sends only the positions with a label through the output head, in the autocast
    dtype. TRL's fused head does the same selection but runs its tiles in float32 with a Python loop over them: with a
    49k-token vocabulary that was 30% of a CPU step of a 135M model under bfloat16 autocast (py-spy), this about 5%."""
    import torch
    from trl import SFTTrainer

    class SFTOnLabelledPositions(SFTTrainer):
        def compute_loss(
            self, model: Any, inputs: dict[str, Any], return_outputs: bool = False, num_items_in_batch: Any = None
        ) -> Any:
            mode = "train" if self.model.training else "eval"
            labels = inputs.pop("labels")
            target = labels[:, 1:]
            keep = (
                (target != -100).any(dim=0).nonzero().squeeze(-1)
            )  # positions whose next token some row is trained on
            outputs = model(**inputs, use_cache=False, logits_to_keep=keep)
            logits, wanted = outputs.logits.float(), target[:, keep]
            counted = (wanted != -100).sum()
            total = torch.nn.functional.cross_entropy(
                logits.flatten(0, 1), wanted.flatten(), ignore_index=-100, reduction="sum"
            )
            loss = total / torch.as_tensor(num_items_in_batch if num_items_in_batch is not None else counted).clamp(
                min=1
            )
            if self.args.average_tokens_across_devices and num_items_in_batch is not None:
                loss = loss * self.accelerator.num_processes  # as TRL's: DDP averages the gradients over the ranks
            with torch.no_grad():
                valid = wanted != -100
                n = self.accelerator.gather_for_metrics(valid.sum()).sum()
                correct = self.accelerator.gather_for_metrics((logits.argmax(-1).eq(wanted) & valid).sum()).sum()
                log_p = torch.log_softmax(logits, dim=-1)
                entropy = self.accelerator.gather_for_metrics((-(log_p.exp() * log_p).sum(-1) * valid).sum()).sum()
                self._metrics[mode]["mean_token_accuracy"].append((correct / n).item() if n > 0 else 0.0)
                self._metrics[mode]["entropy"].append((entropy / n).item() if n > 0 else 0.0)
                if mode == "train":  # TRL's token count (padding excluded), which `trained_tokens` reads
                    mask = inputs.get("attention_mask")
                    local = (
                        mask.sum()
                        if mask is not None
                        else torch.tensor(inputs["input_ids"].numel(), device=labels.device)
                    )
                    self._total_train_tokens += int(self.accelerator.gather_for_metrics(local).sum().item())
                self._metrics[mode]["num_tokens"] = [self._total_train_tokens]
            return (loss, outputs) if return_outputs else loss

    return SFTOnLabelledPositions


def train_sft(
    config: SFTJobConfig, data_root: Any = None, *, progress: Callable[[int], None] | None = None
) -> dict[str, Any]:
    """Train, save the checkpoint with its record and curves; returns the record (`training.json`). Runs as it is under
    `accelerate launch` (a hardware profile): the processes train together and only the main one writes."""
    import datasets
    import torch
    from transformers import PrinterCallback
    from trl import SFTConfig

    from coworkenv.agents.hf import load_causal_lm, quiet_transformers
    from coworkenv.data.publisher import code_version
    from coworkenv.train.fit import fit_rows

    base, out = Path(config.model), Path(config.out)
    check_model_dir(base)
    check_out(out)
    rows, release_id = sft_rows(data_root, config.release, config.extra_sft)
    tokenizer, model = load_causal_lm(base, str(base))
    check_chat_template(tokenizer, base)
    rows, fit = fit_rows(tokenizer, rows, config.max_length, cut=config.long_conversations == "cut")
    if not rows:
        raise CoworkEnvError(
            f"no conversation of {release_id} fits max_length {config.max_length} with an assistant turn: {fit.line()}"
        )
    if not config.assistant_only_loss:
        rows = [{"input_ids": row["input_ids"]} for row in rows]
    dataset = datasets.Dataset.from_list(rows)
    # The rows come tokenized (`fit_rows`): TRL takes the loss mask from their `assistant_masks` column, so its own
    # assistant_only_loss (which wants conversations to render) stays off.
    # Without a GPU, the CPU explicitly: launched processes then join over gloo instead of each training alone.
    use_cpu = config.use_cpu if config.use_cpu is not None else not torch.cuda.is_available()
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore", message=".*gradient_checkpointing.* is deprecated", category=FutureWarning
        )  # raised by TRL's own defaults
        args = SFTConfig(
            output_dir=str(out),
            max_steps=config.max_steps,
            per_device_train_batch_size=config.batch_size,
            gradient_accumulation_steps=config.gradient_accumulation_steps,
            learning_rate=config.learning_rate,
            warmup_steps=config.warmup_steps,
            lr_scheduler_type="cosine",
            max_length=config.max_length,
            seed=config.seed,
            logging_steps=logging_interval(config.logging_steps, config.max_steps),
            assistant_only_loss=False,
            bf16=config.bf16,
            report_to=[],
            save_strategy="no",
            dataloader_num_workers=0,
            dataloader_pin_memory=torch.cuda.is_available(),
            disable_tqdm=True,
            use_cpu=use_cpu,
            gradient_checkpointing=config.gradient_checkpointing,
            packing=config.packing,
            padding_free=config.packing,
        )
    with staged_checkpoint(out) as tmp:
        args.output_dir = str(tmp / SCRATCH_DIR)  # the trainer's scratch, known once the processes agree on `tmp`
        with quiet_transformers():  # TRL's tokenizing passes show bars of their own
            callbacks = [step_callback(progress), snapshot_callback(tmp, config.snapshot_steps, tokenizer)]
            trainer = _trainer_class()(
                model=model,
                args=args,
                train_dataset=dataset,
                processing_class=tokenizer,
                callbacks=callbacks,
                peft_config=config.lora(),
            )
        trainer.remove_callback(PrinterCallback)  # it prints every log dict; the caller shows progress its own way
        start = time.perf_counter()
        result = trainer.train()
        seconds = time.perf_counter() - start
        history = [dict(entry) for entry in trainer.state.log_history]
        losses = finite_losses(history)
        record = {
            "job": "sft",
            "config": config.model_dump(mode="json"),
            "release_id": release_id,
            "base_model": str(base),
            "code_version": code_version(),
            "rows": dataset.num_rows,
            "fit": fit.model_dump(),
            "steps": trainer.state.global_step,
            "processes": args.world_size,
            "train_loss": result.training_loss,
            "first_loss": losses[0],
            "last_loss": losses[-1],
            "seconds": round(seconds, 2),
            "tokens": trained_tokens(trainer),
            "tokens_per_s": round(trained_tokens(trainer) / seconds, 1),
            "log_history": history,
        }
        save_checkpoint(
            tmp, trainer, tokenizer, record, curves_png(history, title=f"SFT of {base.name} on {release_id}")
        )
    return record
