"""The `model` commands: build the offline tiny model (docs/architecture.md, "Models")."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from coworkenv.cli.app import app

model_app = typer.Typer(help="Build models for tests, demos and training.", no_args_is_help=True)
app.add_typer(model_app, name="model")

MAX_SEED = 2**63 - 1
"""A signed 64-bit integer: torch's seed takes no more than 2**64 - 1, and seeds are kept in int64 columns elsewhere."""


@model_app.command("tiny")
def tiny_command(
    out: Annotated[Path, typer.Option(help="Directory to write the model to (must be empty or absent).")],
    seed: Annotated[int, typer.Option(min=0, max=MAX_SEED, help="Weight-init seed: the same seed gives byte-identical files.")] = 0,
    force: Annotated[bool, typer.Option("--force", help="Replace a model already in --out (never a folder without config.json).")] = False,
) -> None:
    """Build the tiny random-init Qwen2 model, its BPE tokenizer and chat template, offline, in seconds."""
    from coworkenv.train.tiny import build_tiny_model, model_files, read_card

    start = time.perf_counter()
    build_tiny_model(out, seed=seed, force=force)
    seconds = time.perf_counter() - start
    card = read_card(out)
    typer.echo(f"tiny model written to {out} in {seconds:.1f} s")
    typer.echo(f"  parameters: {card['parameters']:,}  vocab: {card['vocab_size']:,}  seed: {card['seed']}  "
               f"context: {card['config']['max_position_embeddings']:,} tokens")  # fmt: skip
    typer.echo(f"  corpus: {card['corpus']['documents']} documents, {card['corpus']['characters']:,} characters")
    typer.echo(f"  files: {', '.join(model_files(out))}")
