"""Synthesis commands that need no run: plan (print a generation plan) and families."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError

from coworkenv.cli.app import app
from coworkenv.cli.options import with_config_options
from coworkenv.files import staged_file
from coworkenv.synth.generate import GenerateRequest


@app.command("plan")
@with_config_options(GenerateRequest)
def plan_command(
    settings: dict[str, Any],
    profile: Annotated[Path | None, typer.Option(help="Capability profile JSON (default: cold start → uniform).")] = None,
    out: Annotated[Path | None, typer.Option(help="Also write the plan JSON here (for `coworkenv generate --plan`).")] = None,
) -> None:
    """Print a capability-guided generation plan (the settings are `coworkenv generate`'s)."""
    from rich.console import Console
    from rich.table import Table

    from coworkenv.errors import CoworkEnvError, format_validation_error
    from coworkenv.spec.io import load_model
    from coworkenv.synth.generate import plan_for
    from coworkenv.synth.planner import CapabilityProfile

    try:
        request = GenerateRequest.model_validate(settings)
    except ValidationError as exc:
        raise CoworkEnvError(format_validation_error(exc)) from None
    with staged_file(out) as tmp:  # a bad --out is refused before anything is planned or printed
        the_plan = plan_for(request, load_model(CapabilityProfile, profile) if profile else None)
        table = Table("capability", "difficulty", "family", "count", "seeds", "why")
        for row in the_plan.rows:
            seeds = f"{row.seed_start}..{row.seed_start + row.count - 1}"
            table.add_row(row.capability, str(row.difficulty), row.family, str(row.count), seeds, row.reason)
        if tmp is not None:
            tmp.write_text(the_plan.model_dump_json(indent=2), encoding="utf-8")
    Console().print(table)


@app.command("families")
def families_command() -> None:
    """List the procedural scenario families."""
    from rich.console import Console
    from rich.table import Table

    from coworkenv.synth.family import load_families

    table = Table("family", "capabilities", "services", "knobs", "description")
    for name, fam in load_families().items():
        table.add_row(name, ", ".join(fam.capabilities), ", ".join(fam.services), ", ".join(fam.knobs), fam.description)
    Console().print(table)


