"""Core commands: schema, tools, grade, run, check."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from coworkenv.cli.app import TaskOpt, app, print_json, schema_app
from coworkenv.errors import CoworkEnvError
from coworkenv.fileio import staged_file
from coworkenv.sandbox.budget import IN_PROCESS_BUDGET_S, wall_budget

BudgetOpt = Annotated[
    float,
    typer.Option(
        "--budget-s",
        min=0.1,
        max=86_400,
        help="Wall-clock seconds one task's in-process work may take; more is an error.",
    ),
]


@schema_app.command("task")
def schema_task() -> None:
    """JSON Schema of a TaskSpec."""
    from coworkenv.spec.task import TaskSpec

    print_json(TaskSpec.model_json_schema(by_alias=True))


@schema_app.command("trajectory")
def schema_trajectory() -> None:
    """JSON Schema of a trajectory."""
    from coworkenv.episode.trajectory import Trajectory

    print_json(Trajectory.model_json_schema())


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
        print_json(tool_schemas(names))
        return
    from coworkenv.cli.output import print_rows

    print_rows(("tool", "kind", "description"), [(n, TOOLS.get(n).kind, TOOLS.get(n).description) for n in names])


@app.command()
def grade(
    task: TaskOpt,
    trajectory: Annotated[Path, typer.Option("--trajectory", "-j", help="Trajectory JSON file.")],
    budget_s: BudgetOpt = IN_PROCESS_BUDGET_S,
) -> None:
    """Replay a trajectory on a fresh workspace and print its grade as JSON."""
    from coworkenv.episode.trajectory import Trajectory
    from coworkenv.grading.score import grade_trajectory
    from coworkenv.spec.io import load_model, load_task

    spec = load_task(task)
    replay = load_model(Trajectory, trajectory)  # its errors name the file already
    with wall_budget(budget_s, f"grading {trajectory}"):
        try:
            result = grade_trajectory(spec, replay)
        except CoworkEnvError as exc:
            raise CoworkEnvError(f"{trajectory}: {exc}") from None
    print_json(result.model_dump(mode="json"))


@app.command()
def run(
    task: TaskOpt,
    agent: Annotated[str, typer.Option(help="Policy to run: oracle or null.")] = "oracle",
    out: Annotated[Path | None, typer.Option(help="Write the trajectory JSON here (default: stdout).")] = None,
    budget_s: BudgetOpt = IN_PROCESS_BUDGET_S,
) -> None:
    """Run one episode with an agent and write its trajectory; the grade goes to stderr."""
    from coworkenv.agents import make_policy
    from coworkenv.grading.play import play
    from coworkenv.spec.io import load_task

    with staged_file(out) as tmp:  # a bad --out is refused before the episode is played
        spec = load_task(task)
        with wall_budget(budget_s, f"{spec.id}: the {agent} episode"):
            episode = play(spec, policy=make_policy(agent, spec))
        result = episode.grade
        text = json.dumps(episode.trajectory.to_dict(), indent=2, ensure_ascii=False) + "\n"
        if tmp is None:
            sys.stdout.write(text)
        else:
            tmp.write_text(text, encoding="utf-8")
    typer.echo(f"{spec.id}: agent={agent} score={result.score} passed={result.passed}", err=True)


MAX_TASK_ROWS = 40


def reports_table(reports: list) -> Any:
    """One row per task for a handful of tasks; one row per family beyond that."""
    from rich.table import Table

    if len(reports) <= MAX_TASK_ROWS:
        table = Table("task", "family", "capabilities", "gate", "oracle", "null")
        for r in reports:
            gate = "[green]pass[/]" if r.gate_passed else "[red]FAIL[/]"
            table.add_row(
                r.task_id, r.family, ", ".join(r.capabilities), gate, f"{r.oracle_score:.4f}", f"{r.null_score:.4f}"
            )
        return table
    from coworkenv.pipeline.core_check import summarize_reports

    table = Table("family", "tasks", "gate passed")
    for family, counts in summarize_reports([r.model_dump() for r in reports])["families"].items():
        table.add_row(family, str(counts["tasks"]), str(counts["gate_passed"]))
    return table


def check_with_progress(path: Path, budget_s: float | None = None) -> list:
    from coworkenv.cli.pipeline import progress_bar
    from coworkenv.pipeline.core_check import check_tasks
    from coworkenv.spec.io import load_tasks

    specs = load_tasks(path)
    with progress_bar("checking tasks", len(specs), unit="task") as step:  # a bar on a terminal, lines elsewhere
        reports = check_tasks(specs, progress=step, budget_s=budget_s)
    return reports


@app.command()
def check(
    tasks: Annotated[Path, typer.Argument(help="A task file (.json/.jsonl) or a directory of them.")],
    budget_s: BudgetOpt = IN_PROCESS_BUDGET_S,
) -> None:
    """Check tasks against the grading-consistency gate (oracle 1.0, empty 0.0, a prohibited call zeroes the score) and
    replay their oracle and null trajectories; exit 1 if any task fails. Trusted task files only: it runs in-process."""
    from coworkenv.cli.output import console as make_console

    reports = check_with_progress(tasks, budget_s)
    console = make_console()
    console.print(reports_table(reports))
    failed = [r for r in reports if not r.gate_passed]
    for r in failed:
        for failure in r.failures:
            console.print(f"[red]{r.task_id}[/]: {failure}")
    console.print(f"{len(reports) - len(failed)}/{len(reports)} tasks pass the grading-consistency gate")
    raise typer.Exit(1 if failed else 0)
