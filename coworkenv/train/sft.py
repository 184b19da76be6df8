"""The SFT job (docs/architecture.md, "Training"): TRL's `SFTTrainer` on a release's `sft` table — tool-call
conversations (the oracle's trajectories, or a model's own rejection-sampled successes), loss on assistant tokens
only. One config model (`SFTJobConfig`: the Python API, the CLI flags and the YAML file), one entry point
(`train_sft`). The checkpoint folder gets the model and tokenizer, `training.json` (the config, the release, the base
model, the code version, every logged metric) and `curves.png`.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from coworkenv.errors import CoworkEnvError

TRAINING_FILE = "training.json"
CURVES_FILE = "curves.png"


class SFTJobConfig(BaseModel):
    """Supervised fine-tuning on a release's `sft` rows."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str = Field(min_length=1, description="Model directory to start from (local files only), e.g. the tiny model.")
    release: str = Field("latest", min_length=1, description="Release whose `sft` table to train on (`latest`: the newest task release).")
    out: str = Field(min_length=1, description="Checkpoint directory to write (must be empty or absent).")
    max_steps: int = Field(100, ge=1, le=1_000_000, description="Optimizer steps.")
    batch_size: int = Field(4, ge=1, le=4096, description="Conversations per device and step.")
    gradient_accumulation_steps: int = Field(1, ge=1, le=1024, description="Batches accumulated per optimizer step.")
    learning_rate: float = Field(
        3e-3, gt=0, le=1.0, description="Peak learning rate (3e-3 suits the tiny model; about 1e-5 suits billion-parameter models)."
    )
    warmup_steps: int = Field(5, ge=0, description="Linear warm-up steps before the cosine decay.")
    max_length: int = Field(2048, ge=64, le=1_048_576, description="Tokens per conversation; longer ones are truncated.")
    logging_steps: int = Field(10, ge=1, description="Log the loss every this many steps (the curves and training.json).")
    seed: int = Field(0, ge=0, description="Seed of the data order and dropout: the same settings give the same checkpoint on CPU.")
    assistant_only_loss: bool = Field(True, description="Loss on assistant tokens only (the chat template marks them).")
    use_cpu: bool | None = Field(
        None, description="Train on the CPU even where a GPU is visible (default: a GPU when there is one; the cpu profile sets it too)."
    )


def sft_dataset(data_root: Any, release: str) -> tuple[Any, str]:
    """The release's `sft` rows as a `datasets.Dataset` (tools parsed from their JSON string) and its release id."""
    import datasets

    from coworkenv.data.reader import read_manifest, read_table

    manifest = read_manifest(data_root, release)
    table = read_table(data_root, manifest.release_id, "sft", columns=["messages", "tools"])
    if table.num_rows == 0:
        raise CoworkEnvError(f"release {manifest.release_id} has no sft rows to train on")
    rows = [{"messages": r["messages"], "tools": json.loads(r["tools"])} for r in table.to_pylist()]
    for row in rows:  # TRL renders messages as given: drop the columns the release fills with nulls
        row["messages"] = [{k: v for k, v in m.items() if v is not None} for m in row["messages"]]
    return datasets.Dataset.from_list(rows), manifest.release_id


def _check_model_dir(path: Path) -> None:
    if not (path / "config.json").is_file():
        raise CoworkEnvError(f"{path}: not a model directory (no config.json); build one with `coworkenv model tiny --out {path}`")


def _check_out(path: Path) -> None:
    if path.exists() and (not path.is_dir() or any(path.iterdir())):
        raise CoworkEnvError(f"{path}: exists and is not an empty folder; give a new checkpoint directory")


def check_sft_inputs(config: SFTJobConfig, data_root: Any = None) -> None:
    """The job's inputs, before any work (`--profile` checks them before it launches): the model folder, the
    checkpoint folder, the release."""
    from coworkenv.data.reader import read_manifest

    _check_model_dir(Path(config.model))
    _check_out(Path(config.out))
    read_manifest(data_root, config.release)


@contextmanager
def staged_checkpoint(out: Path) -> Iterator[Path]:
    """`files.staged(out, folder=True)` once per run. Under `accelerate launch` every process runs the job: the main
    one stages the folder and sends its path to the others (a sharded save writes there from every rank), each waits
    for all before the rename, and only the main one renames. Call it after the training arguments exist: they set up
    the processes (`PartialState`)."""
    from accelerate import PartialState
    from accelerate.utils import broadcast_object_list

    from coworkenv.files import staged

    state = PartialState()
    if state.is_main_process:
        with staged(out, folder=True) as tmp:
            broadcast_object_list([str(tmp)])
            yield tmp
            state.wait_for_everyone()
    else:
        [path] = broadcast_object_list([None])
        yield Path(path)
        state.wait_for_everyone()


def train_sft(config: SFTJobConfig, data_root: Any = None, *, progress: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Train, save the checkpoint with its record and curves; returns the record (`training.json`). Runs as it is under
    `accelerate launch` (a hardware profile): the processes train together and only the main one writes."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, PrinterCallback, TrainerCallback
    from trl import SFTConfig, SFTTrainer

    from coworkenv.agents.hf import quiet_transformers
    from coworkenv.data.publisher import code_version

    base, out = Path(config.model), Path(config.out)
    _check_model_dir(base)
    _check_out(out)
    dataset, release_id = sft_dataset(data_root, config.release)

    class Progress(TrainerCallback):
        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            if progress is not None and state.is_world_process_zero:
                progress(1)

    with quiet_transformers():
        tokenizer = AutoTokenizer.from_pretrained(base, local_files_only=True)
        model = AutoModelForCausalLM.from_pretrained(base, local_files_only=True)
    # Without a GPU, the CPU explicitly: launched processes then join over gloo instead of each training alone.
    use_cpu = config.use_cpu if config.use_cpu is not None else not torch.cuda.is_available()
    args = SFTConfig(
        output_dir=str(out), max_steps=config.max_steps, per_device_train_batch_size=config.batch_size,
        gradient_accumulation_steps=config.gradient_accumulation_steps, learning_rate=config.learning_rate,
        warmup_steps=config.warmup_steps, lr_scheduler_type="cosine", max_length=config.max_length, seed=config.seed,
        logging_steps=config.logging_steps, assistant_only_loss=config.assistant_only_loss, bf16=False, report_to=[],
        save_strategy="no", dataloader_num_workers=0, disable_tqdm=True, use_cpu=use_cpu,
    )  # fmt: skip
    with staged_checkpoint(out) as tmp:
        args.output_dir = str(tmp / "trainer")  # the trainer's scratch, known once the processes agree on `tmp`
        trainer = SFTTrainer(model=model, args=args, train_dataset=dataset, processing_class=tokenizer, callbacks=[Progress()])
        trainer.remove_callback(PrinterCallback)  # it prints every log dict; the caller shows progress its own way
        start = time.perf_counter()
        result = trainer.train()
        seconds = time.perf_counter() - start
        history = [dict(entry) for entry in trainer.state.log_history]
        losses = [e["loss"] for e in history if "loss" in e]
        if not losses or not all(math.isfinite(x) for x in losses):
            raise CoworkEnvError(f"training diverged: losses {losses[:5]}")
        with quiet_transformers():
            trainer.save_model(str(tmp))  # every process: a sharded model is gathered collectively; the main one writes
        record = {
            "job": "sft", "config": config.model_dump(mode="json"), "release_id": release_id, "base_model": str(base),
            "code_version": code_version(), "rows": dataset.num_rows, "steps": trainer.state.global_step,
            "processes": args.world_size, "train_loss": result.training_loss, "first_loss": losses[0], "last_loss": losses[-1],
            "seconds": round(seconds, 2), "log_history": history,
        }  # fmt: skip
        if trainer.is_world_process_zero():
            with quiet_transformers():
                tokenizer.save_pretrained(str(tmp))
            shutil.rmtree(tmp / "trainer", ignore_errors=True)  # the trainer's scratch folder: not part of the checkpoint
            (tmp / TRAINING_FILE).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
            (tmp / CURVES_FILE).write_bytes(curves_png(history, title=f"SFT of {base.name} on {release_id}"))
    return record


def curves_png(history: list[dict[str, Any]], *, title: str) -> bytes:
    """The loss (and learning rate) over steps, as a PNG."""
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    points = [(e["step"], e["loss"]) for e in history if "loss" in e and "step" in e]
    fig, ax = plt.subplots(figsize=(7, 3.5))
    try:
        ax.plot([s for s, _ in points], [v for _, v in points], marker="o", color="#2b6cb0", label="training loss")
        ax.set_xlabel("step")
        ax.set_ylabel("loss")
        ax.set_title(title, fontsize=10)
        ax.grid(alpha=0.3)
        rates = [(e["step"], e["learning_rate"]) for e in history if "learning_rate" in e and "step" in e]
        if rates:
            twin = ax.twinx()
            twin.plot([s for s, _ in rates], [r for _, r in rates], color="#a0aec0", linestyle="--", label="learning rate")
            twin.set_ylabel("learning rate", color="#718096")
        ax.legend(loc="upper right", fontsize=8)
        buffer = io.BytesIO()
        fig.tight_layout()
        fig.savefig(buffer, format="png", dpi=100)
        return buffer.getvalue()
    finally:
        plt.close(fig)


def read_training(path: str | os.PathLike[str]) -> dict[str, Any]:
    """A checkpoint's `training.json`."""
    from coworkenv.files import read_json

    data = read_json(Path(path) / TRAINING_FILE)
    if not isinstance(data, dict):
        raise CoworkEnvError(f"{Path(path) / TRAINING_FILE}: expected a JSON object")
    return data
