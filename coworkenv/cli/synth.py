"""Synthesis commands: generate, plan, families."""

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


@app.command()
def generate(
    n: Annotated[int, typer.Option("--n", min=1, help="Number of tasks.")],
    out: Annotated[Path, typer.Option(help="Output directory (tasks.jsonl, rejections.jsonl, plan.json, summary.json).")],
    seed: Annotated[int, typer.Option(min=0, help="Run seed; the same options always give the same tasks.")] = 0,
    families: Annotated[list[str] | None, typer.Option(help="Only these families (comma-separated or repeated).")] = None,
    capabilities: Annotated[list[str] | None, typer.Option(help="Only these capabilities (comma-separated or repeated).")] = None,
    difficulty: Annotated[str, typer.Option(help="Difficulty N or range LO-HI.")] = "1-5",
    plan: Annotated[Path | None, typer.Option(help="Use this plan (from `coworkenv plan`) instead of planning.")] = None,
    profile: Annotated[Path | None, typer.Option(help="Capability profile to plan from (default: cold start).")] = None,
    generator: Annotated[str, typer.Option(help="procedural, llm or mixed.")] = "procedural",
    llm_base_url: Annotated[str | None, typer.Option(help="OpenAI-compatible endpoint for llm/mixed.")] = None,
    llm_model: Annotated[str | None, typer.Option(help="Model name at that endpoint.")] = None,
    llm_share: Annotated[float, typer.Option(help="Share of LLM tasks when mixed.")] = 0.25,
    llm_concurrency: Annotated[int, typer.Option(help="LLM requests in flight.")] = 4,
    llm_timeout: Annotated[float, typer.Option(help="LLM request timeout (s).")] = 120.0,
) -> None:
    """Generate tasks (JSONL, one TaskSpec per line) with a progress bar and a summary."""
    from pydantic import ValidationError
    from rich.console import Console
    from rich.progress import Progress

    from coworkenv.errors import format_validation_error
    from coworkenv.synth.generate import GenerateRequest, check_plan, plan_for, summarize
    from coworkenv.synth.generate import generate as run_generate
    from coworkenv.synth.llm import LLMConfig, LLMGenerator
    from coworkenv.synth.planner import CapabilityProfile, Plan

    try:
        request = GenerateRequest(
            n=n, seed=seed, families=_split(families), capabilities=_split(capabilities), difficulty=_difficulty_range(difficulty),
            generator=generator, llm_share=llm_share,
        )  # fmt: skip
        llm = None
        if llm_base_url or llm_model:
            llm = LLMGenerator(LLMConfig(base_url=llm_base_url or "", model=llm_model or "", concurrency=llm_concurrency, timeout_s=llm_timeout))
    except ValidationError as exc:
        raise CoworkEnvError(format_validation_error(exc)) from None
    if generator != "procedural" and llm is None:
        raise CoworkEnvError(f"--generator {generator} needs --llm-base-url and --llm-model")
    the_plan = check_plan(_load(Plan, plan) or plan_for(request, _load(CapabilityProfile, profile)))
    total = sum(r.count for r in the_plan.rows)
    console = Console(stderr=True)
    with Progress(console=console, transient=True) as progress:
        bar = progress.add_task("generating", total=total)
        tasks, rejections = run_generate(request, the_plan, llm=llm, progress=lambda k: progress.advance(bar, k))
    try:
        out.mkdir(parents=True, exist_ok=True)
        _write_jsonl(out / "tasks.jsonl", [t.to_json() for t in tasks])
        _write_jsonl(out / "rejections.jsonl", [r.model_dump_json() for r in rejections])
        (out / "plan.json").write_text(the_plan.model_dump_json(indent=2), encoding="utf-8")
        summary = summarize([*tasks, *rejections])
        (out / "summary.json").write_text(summary.model_dump_json(indent=2), encoding="utf-8")
    except OSError as exc:
        raise CoworkEnvError(f"{out}: cannot write: {exc}") from None
    stdout = Console()
    for title, counts in (("family", summary.by_family), ("capability", summary.by_capability), ("difficulty", summary.by_difficulty)):
        stdout.print(_counts_table(title, counts))
    if summary.rejections_by_code:
        stdout.print(_counts_table("rejected (code)", summary.rejections_by_code))
    stdout.print(f"{summary.tasks} tasks, {summary.rejections} rejections → {out / 'tasks.jsonl'}")


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


