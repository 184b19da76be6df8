"""Synthesis commands that need no run: plan (print a generation plan) and families."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError

from coworkenv.cli.app import app
from coworkenv.cli.options import with_config_options
from coworkenv.cli.output import FormatOpt, print_rows
from coworkenv.fileio import staged_file
from coworkenv.synth.generate import GenerateRequest


@app.command("plan")
@with_config_options(GenerateRequest)
def plan_command(
    settings: dict[str, Any],
    profile: Annotated[
        Path | None, typer.Option(help="Capability profile JSON (default: cold start → uniform).")
    ] = None,
    out: Annotated[
        Path | None, typer.Option(help="Also write the plan JSON here (for `coworkenv generate --plan`).")
    ] = None,
    fmt: FormatOpt = "table",
) -> None:
    """Print a capability-guided generation plan (the settings are `coworkenv generate`'s)."""
    from coworkenv.errors import CoworkEnvError, format_validation_error
    from coworkenv.spec.capabilities import CapabilityProfile
    from coworkenv.spec.io import load_model
    from coworkenv.synth.generate import plan_for

    try:
        request = GenerateRequest.model_validate(settings)
    except ValidationError as exc:
        raise CoworkEnvError(format_validation_error(exc)) from None
    with staged_file(out) as tmp:  # a bad --out is refused before anything is planned or printed
        the_plan = plan_for(request, load_model(CapabilityProfile, profile) if profile else None)
        rows = [
            (r.capability, r.difficulty, r.family, r.count, f"{r.seed_start}..{r.seed_start + r.count - 1}", r.reason)
            for r in the_plan.rows
        ]
        if tmp is not None:
            tmp.write_text(the_plan.model_dump_json(indent=2), encoding="utf-8")
    print_rows(("capability", "difficulty", "family", "count", "seeds", "why"), rows, fmt)


@app.command("families")
def families_command(fmt: FormatOpt = "table") -> None:
    """List the procedural scenario families."""
    from coworkenv.synth.family import load_families

    rows = [
        (name, ", ".join(fam.capabilities), ", ".join(fam.services), ", ".join(fam.knobs), fam.description)
        for name, fam in load_families().items()
    ]
    print_rows(("family", "capabilities", "services", "knobs", "description"), rows, fmt)
