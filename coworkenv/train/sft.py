"""The SFT job (docs/architecture.md, "Training"): TRL's `SFTTrainer` on a release's `sft` table — tool-call
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
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from coworkenv.errors import CoworkEnvError
from coworkenv.train.checkpoint import (
    CURVES_FILE,
    SCRATCH_DIR,
    SEED_MAX,
    TRAINING_FILE,
    check_model_dir,
    check_out,
    curves_png,
    finite_losses,
    logging_interval,
    read_training,
    save_checkpoint,
    staged_checkpoint,
    step_callback,
)

__all__ = ["CURVES_FILE", "TRAINING_FILE", "SFTJobConfig", "read_training", "sft_dataset", "train_sft"]


class SFTJobConfig(BaseModel):
    """Supervised fine-tuning on a release's `sft` rows."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str = Field(min_length=1, description="Model directory to start from (local files only), e.g. the tiny model.")
    release: str = Field("latest", min_length=1, description="Release whose `sft` table to train on (`latest`: the newest task release).")
    out: str = Field(min_length=1, description="Checkpoint directory to write (must be empty or absent).")
    extra_sft: list[str] = Field(
        [], description="Parquet files of more `sft` rows to train on, e.g. a model's own successes from `coworkenv eval sft`."
    )
    max_steps: int = Field(100, ge=1, le=1_000_000, description="Optimizer steps.")
    batch_size: int = Field(4, ge=1, le=4096, description="Conversations per device and step.")
    gradient_accumulation_steps: int = Field(1, ge=1, le=1024, description="Batches accumulated per optimizer step.")
    learning_rate: float = Field(
        3e-3, gt=0, le=1.0, description="Peak learning rate (3e-3 suits the tiny model; about 1e-5 suits billion-parameter models)."
    )
    warmup_steps: int = Field(5, ge=0, description="Linear warm-up steps before the cosine decay.")
    max_length: int = Field(2048, ge=64, le=1_048_576, description="Tokens per conversation; longer ones are truncated.")
    logging_steps: int = Field(10, ge=1, description="Log the loss every this many steps (the curves and training.json).")
    seed: int = Field(0, ge=0, le=SEED_MAX, description="Seed of the data order and dropout: the same settings give the same checkpoint on CPU.")
    assistant_only_loss: bool = Field(True, description="Loss on assistant tokens only (the chat template marks them).")
    use_cpu: bool | None = Field(None, description="Train on the CPU even where a GPU is visible (default: a GPU when there is one).")


def sft_dataset(data_root: Any, release: str, extra: list[str] | tuple[str, ...] = ()) -> tuple[Any, str]:
    """The release's `sft` rows and those of the `extra` Parquet files as a `datasets.Dataset` (tools parsed from
    their JSON string), and the release id."""
    import datasets
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
    return datasets.Dataset.from_list(rows), manifest.release_id


def check_sft_inputs(config: SFTJobConfig, data_root: Any = None) -> None:
    """The job's inputs, before any work (`--profile` checks them before it launches): the model folder, the
    checkpoint folder, the release."""
    from coworkenv.data.reader import read_manifest

    check_model_dir(Path(config.model))
    check_out(Path(config.out))
    read_manifest(data_root, config.release)


def train_sft(config: SFTJobConfig, data_root: Any = None, *, progress: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Train, save the checkpoint with its record and curves; returns the record (`training.json`). Runs as it is under
    `accelerate launch` (a hardware profile): the processes train together and only the main one writes."""
    import torch
    from transformers import PrinterCallback
    from trl import SFTConfig, SFTTrainer

    from coworkenv.agents.hf import load_causal_lm, quiet_transformers
    from coworkenv.data.publisher import code_version

    base, out = Path(config.model), Path(config.out)
    check_model_dir(base)
    check_out(out)
    dataset, release_id = sft_dataset(data_root, config.release, config.extra_sft)
    tokenizer, model = load_causal_lm(base, str(base))
    # Without a GPU, the CPU explicitly: launched processes then join over gloo instead of each training alone.
    use_cpu = config.use_cpu if config.use_cpu is not None else not torch.cuda.is_available()
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*gradient_checkpointing.* is deprecated", category=FutureWarning)  # raised by TRL's own defaults
        args = SFTConfig(
            output_dir=str(out), max_steps=config.max_steps, per_device_train_batch_size=config.batch_size,
            gradient_accumulation_steps=config.gradient_accumulation_steps, learning_rate=config.learning_rate,
            warmup_steps=config.warmup_steps, lr_scheduler_type="cosine", max_length=config.max_length, seed=config.seed,
            logging_steps=logging_interval(config.logging_steps, config.max_steps), assistant_only_loss=config.assistant_only_loss,
            bf16=False, report_to=[], save_strategy="no", dataloader_num_workers=0, dataloader_pin_memory=torch.cuda.is_available(),
            disable_tqdm=True, use_cpu=use_cpu,
        )  # fmt: skip
    with staged_checkpoint(out) as tmp:
        args.output_dir = str(tmp / SCRATCH_DIR)  # the trainer's scratch, known once the processes agree on `tmp`
        with quiet_transformers():  # TRL's tokenizing passes show bars of their own
            trainer = SFTTrainer(model=model, args=args, train_dataset=dataset, processing_class=tokenizer, callbacks=[step_callback(progress)])
        trainer.remove_callback(PrinterCallback)  # it prints every log dict; the caller shows progress its own way
        start = time.perf_counter()
        result = trainer.train()
        seconds = time.perf_counter() - start
        history = [dict(entry) for entry in trainer.state.log_history]
        losses = finite_losses(history)
        record = {
            "job": "sft", "config": config.model_dump(mode="json"), "release_id": release_id, "base_model": str(base),
            "code_version": code_version(), "rows": dataset.num_rows, "steps": trainer.state.global_step,
            "processes": args.world_size, "train_loss": result.training_loss, "first_loss": losses[0], "last_loss": losses[-1],
            "seconds": round(seconds, 2), "log_history": history,
        }  # fmt: skip
        save_checkpoint(tmp, trainer, tokenizer, record, curves_png(history, title=f"SFT of {base.name} on {release_id}"))
    return record
