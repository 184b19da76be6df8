"""The `coworkenv` command. Bad input → one line on stderr and exit code 2, never a traceback."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from coworkenv.errors import CoworkEnvError

app = typer.Typer(
    help="CoworkEnv: executable, verifiable training environments for tool-using coworker agents.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
schema_app = typer.Typer(help="Print the JSON Schema of a contract type.", no_args_is_help=True)
app.add_typer(schema_app, name="schema")

TaskOpt = Annotated[Path, typer.Option("--task", "-t", help="TaskSpec JSON file.")]


def _print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, indent=2, ensure_ascii=False) + "\n")


@schema_app.command("task")
def schema_task() -> None:
    """JSON Schema of a TaskSpec."""
    from coworkenv.spec.task import TaskSpec

    _print_json(TaskSpec.model_json_schema(by_alias=True))


@schema_app.command("trajectory")
def schema_trajectory() -> None:
    """JSON Schema of a trajectory."""
    from coworkenv.env.trajectory import Trajectory

    _print_json(Trajectory.model_json_schema())


@app.command()
def tools(
    service: Annotated[str | None, typer.Option(help="Only this service's tools.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="OpenAI function schemas instead of a table.")] = False,
) -> None:
    """List the tool catalog."""
    from coworkenv.workspace import TOOLS, tool_schemas

    names = [n for n in TOOLS.names() if service is None or TOOLS.get(n).service == service]
    if service is not None and not names:
        raise CoworkEnvError(f"unknown service {service!r}")
    if as_json:
        _print_json(tool_schemas(names))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table("tool", "kind", "description")
    for name in names:
        t = TOOLS.get(name)
        table.add_row(name, t.kind, t.description)
    Console().print(table)


@app.command()
def grade(
    task: TaskOpt,
    trajectory: Annotated[Path, typer.Option("--trajectory", "-j", help="Trajectory JSON file.")],
) -> None:
    """Replay a trajectory on a fresh workspace and print its grade as JSON."""
    from coworkenv.env.trajectory import Trajectory
    from coworkenv.grading.score import grade_trajectory
    from coworkenv.spec.io import load_model, load_task

    spec = load_task(task)
    try:
        result = grade_trajectory(spec, load_model(Trajectory, trajectory))
    except CoworkEnvError as exc:
        raise CoworkEnvError(f"{trajectory}: {exc}") from None
    _print_json(result.model_dump(mode="json"))


@app.command()
def run(
    task: TaskOpt,
    agent: Annotated[str, typer.Option(help="Policy to run: oracle or null.")] = "oracle",
    out: Annotated[Path | None, typer.Option(help="Write the trajectory JSON here (default: stdout).")] = None,
) -> None:
    """Run one episode with an agent and write its trajectory; the grade goes to stderr."""
    from coworkenv.agents import make_policy
    from coworkenv.env.runner import run_episode
    from coworkenv.grading.score import grade as grade_evidence
    from coworkenv.spec.io import load_task

    spec = load_task(task)
    trajectory, evidence = run_episode(spec, make_policy(agent, spec))
    result = grade_evidence(spec, evidence)
    text = json.dumps(trajectory.to_dict(), indent=2, ensure_ascii=False) + "\n"
    if out is None:
        sys.stdout.write(text)
    else:
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise CoworkEnvError(f"{out}: cannot write: {exc}") from None
    typer.echo(f"{spec.id}: agent={agent} score={result.score} passed={result.passed}", err=True)


def _reports_table(reports: list) -> Any:
    from rich.table import Table

    table = Table("task", "family", "capabilities", "gate", "oracle", "null")
    for r in reports:
        gate = "[green]pass[/]" if r.gate_passed else "[red]FAIL[/]"
        table.add_row(r.task_id, r.family, ", ".join(r.capabilities), gate, f"{r.oracle_score:.4f}", f"{r.null_score:.4f}")
    return table


def _check(path: Path) -> list:
    from rich.console import Console
    from rich.progress import Progress

    from coworkenv.pipeline.core_check import check_tasks
    from coworkenv.spec.io import load_tasks

    specs = load_tasks(path)
    with Progress(console=Console(stderr=True), transient=True) as progress:
        bar = progress.add_task("checking tasks", total=len(specs))
        reports = check_tasks(specs, progress=lambda: progress.advance(bar))
    return reports


@app.command()
def gate(tasks: Annotated[Path, typer.Argument(help="A task file (.json/.jsonl) or a directory of them.")]) -> None:
    """Run the grading-consistency gate on tasks; exit 1 if any task fails it."""
    from rich.console import Console

    reports = _check(tasks)
    console = Console()
    console.print(_reports_table(reports))
    failed = [r for r in reports if not r.gate_passed]
    for r in failed:
        for failure in r.failures:
            console.print(f"[red]{r.task_id}[/]: {failure}")
    console.print(f"{len(reports) - len(failed)}/{len(reports)} tasks pass the grading-consistency gate")
    raise typer.Exit(1 if failed else 0)


@app.command()
def demo(tasks: Annotated[Path, typer.Argument(help="Tasks to run.")] = Path("examples/tasks")) -> None:
    """Run the core end to end on example tasks: gate, oracle and null agents, grades."""
    gate(tasks)


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


@app.command("airflow-env")
def airflow_env() -> None:
    """Print `export` lines for the embedded Airflow (SQLite, LocalExecutor, this repo's dags/)."""
    from coworkenv.airflow_env import embedded_env, shell_exports

    typer.echo(shell_exports(embedded_env()))


def main() -> None:
    try:
        app()
    except CoworkEnvError as exc:
        typer.echo(f"error: {exc}", err=True)
        sys.exit(2)


if __name__ == "__main__":
    main()
