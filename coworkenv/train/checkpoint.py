"""What every training job shares (docs/design/training.md, "Training"): the checks of its model and output folders, the
progress callback, the divergence check, and the checkpoint folder — model, tokenizer, `training.json` (the job's
record) and `curves.png` (its curves over steps)."""

from __future__ import annotations

import json
import math
import os
import shutil
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from coworkenv.errors import CoworkEnvError

TRAINING_FILE = "training.json"
CURVES_FILE = "curves.png"
SCRATCH_DIR = "trainer"
"""The trainer's own output folder inside the staged checkpoint: removed before the checkpoint is renamed into place."""


SEED_MAX = 2**32 - 1
"""The largest training seed: transformers' `set_seed` hands it to numpy, which takes no more."""

WEIGHTS = ("*.safetensors", "pytorch_model*.bin", "*.safetensors.index.json", "pytorch_model*.bin.index.json")
TOKENIZER = ("tokenizer.json", "tokenizer_config.json")


def check_model_dir(path: Path) -> None:
    """A folder transformers can load a causal LM and its tokenizer from, judged by its files alone (no model load):
    the training jobs and the model registry refuse anything else before any work, not with a loader's traceback."""
    from coworkenv.fileio import read_json

    _check_contained(path)
    if not (path / "config.json").is_file():
        raise CoworkEnvError(f"{path}: not a model checkpoint (no config.json)")
    config = read_json(path / "config.json")
    if not isinstance(config, dict) or not isinstance(config.get("model_type"), str) or not config["model_type"]:
        raise CoworkEnvError(f"{path}: not a model checkpoint (config.json is not a JSON object with a model_type)")
    if not any(next(path.glob(pattern), None) for pattern in WEIGHTS):
        raise CoworkEnvError(f"{path}: not a model checkpoint (no weights: *.safetensors or pytorch_model*.bin)")
    if not any((path / name).is_file() for name in TOKENIZER):
        raise CoworkEnvError(f"{path}: not a model checkpoint (no tokenizer: {' or '.join(TOKENIZER)})")


def _check_contained(path: Path) -> None:
    """Nothing in the folder leads out of it (a link to /etc/passwd named model.safetensors would be read, copied
    into the registry and trained on) or is not a plain file or folder."""
    inside = path.resolve()
    for entry in path.rglob("*"):
        if entry.is_symlink() and not entry.resolve().is_relative_to(inside):
            raise CoworkEnvError(f"{path}: {entry.relative_to(path)} is a link that leads out of the folder")
        if not (entry.is_file() or entry.is_dir()):
            raise CoworkEnvError(f"{path}: {entry.relative_to(path)} is neither a file nor a folder")


def check_chat_template(tokenizer: Any, where: Path, *, assistant_mask: bool = True) -> None:
    """A tokenizer whose chat template renders tool conversations (and marks the assistant's tokens, which
    assistant-only losses need); one line naming the folder otherwise, not a traceback from inside the trainer."""
    template = tokenizer.chat_template
    if not isinstance(template, str) or not template.strip():
        raise CoworkEnvError(f"{where}: the tokenizer has no chat template")
    if assistant_mask and "generation" not in template:
        raise CoworkEnvError(
            f"{where}: the chat template does not mark assistant tokens ({{% generation %}}), which the loss needs"
        )
    probe = [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "probe", "arguments": "{}"}}],
        },
    ]
    tools = [
        {
            "type": "function",
            "function": {"name": "probe", "description": "", "parameters": {"type": "object", "properties": {}}},
        }
    ]
    try:
        text = tokenizer.apply_chat_template(probe, tools=tools, tokenize=False)
    except Exception as exc:  # noqa: BLE001 — a template that fails to render fails the job here, in one line
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise CoworkEnvError(f"{where}: the chat template cannot render a tool call: {reason}") from None
    if "probe" not in text.split("hi", 1)[-1]:
        raise CoworkEnvError(
            f"{where}: the chat template drops tool calls (a model trained with it would never see one)"
        )


BF16_GAIN = 0.9
"""bfloat16 autocast is used on a CPU when it takes at most this share of float32's time on the probe."""


@cache
def bf16_pays() -> bool:
    """Whether bfloat16 autocast speeds training here: a GPU that supports it; on a CPU, native bfloat16 instructions
    (AVX512-BF16 or AMX) and a measured gain (`bf16_speed_ratio`, once per process). Without the instructions PyTorch
    emulates it: one SmolLM2 step of 1,024 tokens took 209 s against 8.7 s in float32 on a 2-core AVX2 machine. With
    them it may still lose: 9.0 s against 5.7 s on a 2-core Xeon with AVX512-BF16, where a 2-core EPYC with it gains
    1.6× (docs/benchmarks.md)."""
    import torch

    if torch.cuda.is_available():
        return bool(torch.cuda.is_bf16_supported())
    try:
        flags = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
        native = "avx512_bf16" in flags or "amx_bf16" in flags
    except OSError:  # not Linux: PyTorch's own view of the CPU
        capability = torch.backends.cpu.get_cpu_capability()
        native = capability.startswith("AVX512") and "BF16" in capability
    return native and bf16_speed_ratio() <= BF16_GAIN


def bf16_speed_ratio(tokens: int = 512, repeats: int = 5) -> float:
    """bf16 autocast's time over float32's for the forward and backward of a SmolLM2-sized MLP block (576 → 1,536 →
    576) on `tokens` rows, best of `repeats` each (about half a second on 2 cores). It tracks a whole training step:
    1.55 against 1.58 on the Xeon above."""
    import time

    import torch

    generator = torch.Generator().manual_seed(0)
    x = torch.randn(tokens, 576, generator=generator, requires_grad=True)
    block = torch.nn.Sequential(torch.nn.Linear(576, 1536), torch.nn.SiLU(), torch.nn.Linear(1536, 576))

    def best(bf16: bool) -> float:
        times = []
        for _ in range(repeats + 1):  # the first warms up
            began = time.perf_counter()
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
                out = block(x).float().sum()
            out.backward()
            times.append(time.perf_counter() - began)
        return min(times[1:])

    return best(True) / best(False)


class TuningFields(BaseModel):
    """How much of the model a job trains and what it recomputes: the fields every training job's config shares."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    lora_rank: int = Field(
        0,
        ge=0,
        le=1024,
        description="LoRA rank on every linear layer (peft); 0: full fine-tuning. The checkpoint is always a whole model (merged).",
    )
    lora_alpha: float = Field(
        32.0, gt=0, le=4096, description="LoRA scaling numerator (the update is scaled by alpha / rank)."
    )
    gradient_checkpointing: bool = Field(
        False,
        description="Recompute activations in the backward pass: less memory, about a third more compute (for a GPU near its memory limit).",
    )
    bf16: bool = Field(
        False,
        description="bfloat16 autocast (weights stay float32): 1.6x the tokens/s on CPUs with AVX512-BF16 or AMX, and on recent GPUs; "
        "about 24x slower on CPUs without them (AVX2 only), where PyTorch emulates it.",
    )

    def lora(self) -> Any:
        """peft's LoRA on every linear layer but the output head; None for full fine-tuning (rank 0)."""
        if self.lora_rank == 0:
            return None
        from peft import LoraConfig

        return LoraConfig(
            r=self.lora_rank,
            lora_alpha=self.lora_alpha,
            lora_dropout=0.0,
            target_modules="all-linear",
            task_type="CAUSAL_LM",
        )


def trained_tokens(trainer: Any) -> int:
    """Tokens the trainer has fed the model (TRL's own count: padding excluded)."""
    return int(getattr(trainer, "_total_train_tokens", 0))


def check_out(path: Path) -> None:
    if path.exists() and (not path.is_dir() or any(path.iterdir())):
        raise CoworkEnvError(f"{path}: exists and is not an empty folder; give a new checkpoint directory")


def metric_curve(history: list[dict[str, Any]], key: str) -> list[tuple[int, float]]:
    """(step, value) of one logged metric over training (Trainer's `log_history`)."""
    return [(entry["step"], entry[key]) for entry in history if key in entry and "step" in entry]


def curves_png(
    history: list[dict[str, Any]],
    *,
    title: str,
    series: Mapping[str, str] | None = None,
    twin: tuple[str, str] | None = ("learning_rate", "learning rate"),
    ylabel: str = "loss",
) -> bytes:
    """Logged metrics over steps, as a PNG: `series` (metric key → legend label; default: the training loss) on the
    left axis, `twin` (key, label) dashed on a right axis of its own scale."""
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series = {"loss": "training loss"} if series is None else series
    fig, ax = plt.subplots(figsize=(7, 3.5))
    try:
        colors = ["#2b6cb0", "#c05621", "#2f855a", "#b83280", "#6b46c1", "#975a16"]
        for i, (key, label) in enumerate(series.items()):
            points = metric_curve(history, key)
            ax.plot(
                [s for s, _ in points],
                [v for _, v in points],
                marker="o",
                markersize=3,
                color=colors[i % len(colors)],
                label=label,
            )
        ax.set_xlabel("step")
        ax.set_ylabel(ylabel)
        ax.set_title(title, fontsize=10)
        ax.grid(alpha=0.3)
        lines = ax.get_lines()
        rates = metric_curve(history, twin[0]) if twin is not None else []
        if twin is not None and rates:
            other = ax.twinx()
            lines += other.plot(
                [s for s, _ in rates], [r for _, r in rates], color="#a0aec0", linestyle="--", label=twin[1]
            )
            other.set_ylabel(twin[1], color="#718096")
        ax.legend(lines, [line.get_label() for line in lines], loc="upper right", fontsize=8)
        buffer = io.BytesIO()
        fig.tight_layout()
        fig.savefig(buffer, format="png", dpi=100)
        return buffer.getvalue()
    finally:
        plt.close(fig)


def read_training(path: str | os.PathLike[str]) -> dict[str, Any]:
    """A checkpoint's `training.json`."""
    from coworkenv.fileio import read_json

    data = read_json(Path(path) / TRAINING_FILE)
    if not isinstance(data, dict):
        raise CoworkEnvError(f"{Path(path) / TRAINING_FILE}: expected a JSON object")
    return data


def step_callback(progress: Callable[[int], None] | None) -> Any:
    """A `TrainerCallback` that advances `progress` by one at the end of every optimizer step."""
    from transformers import TrainerCallback

    class Progress(TrainerCallback):
        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            if progress is not None and state.is_world_process_zero:
                progress(1)

    return Progress()


SNAPSHOTS_DIR = "snapshots"


def snapshot_callback(folder: Path, steps: list[int], tokenizer: Any) -> Any:
    """A `TrainerCallback` that saves the whole model (LoRA merged into a copy) and the tokenizer after each of `steps`,
    into `<folder>/snapshots/step-N/`, with the supervised tokens seen so far: the points of a learning curve."""
    import copy

    from transformers import TrainerCallback

    from coworkenv.agents.hf import quiet_transformers

    wanted = set(steps)

    class Snapshot(TrainerCallback):
        def on_step_end(self, args: Any, state: Any, control: Any, model: Any = None, **kwargs: Any) -> None:
            if state.global_step not in wanted or not state.is_world_process_zero or model is None:
                return
            dest = folder / SNAPSHOTS_DIR / f"step-{state.global_step}"
            whole = copy.deepcopy(model).merge_and_unload() if hasattr(model, "merge_and_unload") else model
            with quiet_transformers():
                whole.save_pretrained(str(dest))
                tokenizer.save_pretrained(str(dest))
            (dest / "snapshot.json").write_text(
                json.dumps({"step": state.global_step, "epoch": state.epoch}) + "\n", encoding="utf-8"
            )

    return Snapshot()


def logged(history: list[dict[str, Any]], key: str) -> list[float]:
    """The values of one logged metric, in step order."""
    return [entry[key] for entry in history if key in entry]


def logging_interval(logging_steps: int, max_steps: int) -> int:
    """Log at least twice where there are two steps: a trainer logs every `logging_steps` steps, so a shorter run would
    record no loss at all, and a run logged once reports its loss going from a value to the same value."""
    return max(1, min(logging_steps, max_steps // 2))


def finite_losses(history: list[dict[str, Any]]) -> list[float]:
    """The logged losses; a non-finite one means the run diverged."""
    losses = logged(history, "loss")
    if not losses:
        raise CoworkEnvError("training logged no loss: no example was left to train on")
    if not all(math.isfinite(x) for x in losses):
        raise CoworkEnvError(f"training diverged: losses {losses[:5]}")
    return losses


@contextmanager
def staged_checkpoint(out: Path) -> Iterator[Path]:
    """`files.staged(out, folder=True)` once per run. Under `accelerate launch` every process runs the job: the main
    one stages the folder and sends its path to the others (a sharded save writes there from every rank), each waits
    for all before the rename, and only the main one renames. Call it after the training arguments exist: they set up
    the processes (`PartialState`)."""
    from accelerate import PartialState
    from accelerate.utils import broadcast_object_list

    from coworkenv.fileio import staged

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


def save_model(folder: Path, trainer: Any) -> None:
    """The trained model's weights into `folder`; a LoRA-trained one merged into its base first, so that every checkpoint
    is a whole model that loads without peft."""
    from coworkenv.agents.hf import quiet_transformers

    model = trainer.model
    with quiet_transformers():
        if hasattr(model, "merge_and_unload"):
            if trainer.is_world_process_zero():
                model.merge_and_unload().save_pretrained(str(folder))
        else:
            trainer.save_model(str(folder))


def save_checkpoint(folder: Path, trainer: Any, tokenizer: Any, record: dict[str, Any], curves: bytes) -> None:
    """Model, tokenizer, the record and the curves into the staged checkpoint `folder`, without the trainer's scratch.
    Every process calls it (a sharded model is gathered collectively); only the main one writes."""
    from coworkenv.agents.hf import quiet_transformers

    save_model(folder, trainer)
    if not trainer.is_world_process_zero():
        return
    with quiet_transformers():
        tokenizer.save_pretrained(str(folder))
    shutil.rmtree(folder / SCRATCH_DIR, ignore_errors=True)
    (folder / TRAINING_FILE).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    (folder / CURVES_FILE).write_bytes(curves)
