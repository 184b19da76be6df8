"""Synthesis commands that need no run: plan (print a generation plan) and families."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from coworkenv.cli.app import app
from coworkenv.errors import CoworkEnvError


def _split(values: list[str] | None) -> list[str] | None:
    """`--families a,b --families c` → [a, b, c]."""
    if not values:
        return None
    return [v.strip() for value in values for v in value.split(",") if v.strip()]


def _difficulty_range(text: str) -> tuple[int, int]:
    try:
        lo, _, hi = text.partition("-")
        bounds = (int(lo), int(hi or lo))
    except ValueError:
        raise CoworkEnvError(f"--difficulty must be N or LO-HI within 1-5, got {text!r}") from None
    if not 1 <= bounds[0] <= bounds[1] <= 5:
        raise CoworkEnvError(f"--difficulty must be N or LO-HI within 1-5, got {text!r}")
    return bounds


def _load(model: Any, path: Path | None) -> Any:
    from coworkenv.spec.io import load_model

    return None if path is None else load_model(model, path)


def _write_jsonl(path: Path, lines: list[str]) -> None:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")


def _counts_table(title: str, counts: dict[str, int]) -> Any:
    from rich.table import Table

    table = Table(title, "tasks", title_justify="left")
    for key, value in counts.items():
        table.add_row(key, str(value))
    return table


@app.command("plan")
def plan_command(
    n: Annotated[int, typer.Option("--n", min=1, help="Task budget.")],
    profile: Annotated[Path | None, typer.Option(help="Capability profile JSON (default: cold start → uniform).")] = None,
    seed: Annotated[int, typer.Option(min=0, help="Run seed (fixes the seed ranges).")] = 0,
    families: Annotated[list[str] | None, typer.Option(help="Only these families.")] = None,
    capabilities: Annotated[list[str] | None, typer.Option(help="Only these capabilities.")] = None,
    difficulty: Annotated[str, typer.Option(help="Difficulty N or range LO-HI.")] = "1-5",
    out: Annotated[Path | None, typer.Option(help="Also write the plan JSON here.")] = None,
) -> None:
    """Print a capability-guided generation plan for N tasks."""
    from rich.console import Console
    from rich.table import Table

    from coworkenv.synth.generate import GenerateRequest, plan_for
    from coworkenv.synth.planner import CapabilityProfile

    request = GenerateRequest(n=n, seed=seed, families=_split(families), capabilities=_split(capabilities), difficulty=_difficulty_range(difficulty))
    the_plan = plan_for(request, _load(CapabilityProfile, profile))
    table = Table("capability", "difficulty", "family", "count", "seeds", "why")
    for row in the_plan.rows:
        seeds = f"{row.seed_start}..{row.seed_start + row.count - 1}"
        table.add_row(row.capability, str(row.difficulty), row.family, str(row.count), seeds, row.reason)
    Console().print(table)
    if out is not None:
        out.write_text(the_plan.model_dump_json(indent=2), encoding="utf-8")


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


