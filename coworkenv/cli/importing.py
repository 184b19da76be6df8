"""`coworkenv import claw-eval DIR`: tasks of other benchmarks as TaskSpecs, with a report of what did not map."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from coworkenv.cli.app import app
from coworkenv.cli.pipeline import progress_bar
from coworkenv.fileio import staged_file

import_app = typer.Typer(help="Import tasks written for other benchmarks.", no_args_is_help=True)
app.add_typer(import_app, name="import")


@import_app.command("claw-eval")
def claw_eval_command(
    source: Annotated[
        Path, typer.Argument(help="A Claw-Eval tasks folder: every folder under it holding a task.yaml is a task.")
    ],
    out: Annotated[Path | None, typer.Option(help="Write the TaskSpecs here as JSON Lines (default: stdout).")] = None,
    report: Annotated[Path | None, typer.Option(help="Write the per-task report here (JSON).")] = None,
    keep_without_oracle: Annotated[
        bool,
        typer.Option(
            "--keep-without-oracle", help="Also write tasks with no derivable oracle, or whose oracle fails the gate."
        ),
    ] = False,
    own_grader: Annotated[
        bool,
        typer.Option(
            "--own-grader",
            help="SOURCE is a Claw-Eval checkout: grade each task with its own grader.py from there (a sandboxed code "
            "check; later grading finds the checkout through COWORKENV_CLAW_EVAL_SRC).",
        ),
    ] = False,
) -> None:
    """Convert Claw-Eval tasks (task.yaml, fixtures, tools, safety checks, scoring) into TaskSpecs with a derived oracle
    proven by the grading-consistency gate. Only tasks with such an oracle are written, unless --keep-without-oracle.
    grader.py is read for literal constants and, with --own-grader, run only in the sandbox."""
    from rich.table import Table

    from coworkenv.cli.output import console as make_console
    from coworkenv.importers.claw_eval import import_claw_eval

    with staged_file(out) as tasks_tmp, staged_file(report) as report_tmp:  # bad paths are refused before any work
        with progress_bar("importing tasks", None, unit="task") as step:
            result = import_claw_eval(
                source,
                keep_without_oracle=keep_without_oracle,
                own_grader=own_grader,
                progress=lambda done, total: step(total=total) if done == 0 else step(),
            )
        lines = "".join(spec.to_json() + "\n" for spec in result.specs)
        if tasks_tmp is None:
            sys.stdout.write(lines)
        else:
            tasks_tmp.write_text(lines, encoding="utf-8")
        if report_tmp is not None:
            report_tmp.write_text(result.report.model_dump_json(indent=2) + "\n", encoding="utf-8")
    console = make_console(stderr=True)
    table = Table("task", "imported", "criteria", "exact", "approx.", "rubric", "not expr.", "oracle", "gate")
    for t in result.report.tasks:
        c = t.counts
        table.add_row(
            t.task_id,
            "yes" if t.imported else f"no: {t.why_not}",
            str(c.total),
            str(c.exact),
            str(c.approximate),
            str(c.rubric),
            str(c.unexpressible),
            "yes" if t.oracle else "no",
            t.gate,
        )
    console.print(table)
    console.print(result.report.summary.line())
