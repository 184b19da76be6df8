"""What every training job shares (docs/architecture.md, "Training"): the checks of its model and output folders, the
progress callback, the divergence check, and the checkpoint folder — model, tokenizer, `training.json`, `curves.png`."""

from __future__ import annotations

import json
import math
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from coworkenv.errors import CoworkEnvError

TRAINING_FILE = "training.json"
CURVES_FILE = "curves.png"
SCRATCH_DIR = "trainer"
"""The trainer's own output folder inside the staged checkpoint: removed before the checkpoint is renamed into place."""


def check_model_dir(path: Path) -> None:
    if not (path / "config.json").is_file():
        raise CoworkEnvError(f"{path}: not a model directory (no config.json); build one with `coworkenv model tiny --out {path}`")


def check_out(path: Path) -> None:
    if path.exists() and (not path.is_dir() or any(path.iterdir())):
        raise CoworkEnvError(f"{path}: exists and is not an empty folder; give a new checkpoint directory")


def step_callback(progress: Callable[[int], None] | None) -> Any:
    """A `TrainerCallback` that advances `progress` by one at the end of every optimizer step."""
    from transformers import TrainerCallback

    class Progress(TrainerCallback):
        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            if progress is not None:
                progress(1)

    return Progress()


def logged(history: list[dict[str, Any]], key: str) -> list[float]:
    """The values of one logged metric, in step order."""
    return [entry[key] for entry in history if key in entry]


def logging_interval(logging_steps: int, max_steps: int) -> int:
    """Log at least once: a trainer logs every `logging_steps` steps, so a shorter run would record no loss at all."""
    return min(logging_steps, max_steps)


def finite_losses(history: list[dict[str, Any]]) -> list[float]:
    """The logged losses; a non-finite one means the run diverged."""
    losses = logged(history, "loss")
    if not losses:
        raise CoworkEnvError("training logged no loss: no example was left to train on")
    if not all(math.isfinite(x) for x in losses):
        raise CoworkEnvError(f"training diverged: losses {losses[:5]}")
    return losses


def save_checkpoint(folder: Path, trainer: Any, tokenizer: Any, record: dict[str, Any], curves: bytes) -> None:
    """Model, tokenizer, the record and the curves into the staged checkpoint `folder`, without the trainer's scratch."""
    from coworkenv.agents.hf import quiet_transformers

    with quiet_transformers():
        trainer.save_model(str(folder))
        tokenizer.save_pretrained(str(folder))
    shutil.rmtree(folder / SCRATCH_DIR, ignore_errors=True)
    (folder / TRAINING_FILE).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    (folder / CURVES_FILE).write_bytes(curves)
