"""The synthesis pipeline from the command line: `synthesize` runs every stage; `generate`, `validate`, `repair`,
`rollout`, `build`, `gate` and `publish` run one stage each. All of them are the pipeline's own stage functions over
the run directory `<data root>/runs/<run id>/` (docs/design/pipeline.md, "Run directory"), so a run can be started
here and continued anywhere, Airflow included."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer

from coworkenv.cli.app import app
from coworkenv.cli.options import with_config_options
from coworkenv.errors import CoworkEnvError
from coworkenv.pipeline.config import EndpointSettings, SynthesisConfig, synthesis_config
from coworkenv.pipeline.job import Job, Stage, StageInputs
from coworkenv.pipeline.synthesis import SYNTHESIS

RunIdOpt = Annotated[str, typer.Option("--run-id", help="The run (its directory is <data root>/runs/<run id>/).")]
NewRunIdOpt = Annotated[
    str | None,
    typer.Option("--run-id", help="Name of the run; the release id is a function of it (default: cli__<UTC time>)."),
]
DataRootOpt = Annotated[
    str | None, typer.Option("--data-root", help="Data root (default: $COWORKENV_DATA_ROOT, else ./data).")
]


def new_run_id() -> str:
    return "cli__" + datetime.now(UTC).strftime("%Y-%m-%dT%H-%M-%SZ")


def _open(run_id: str, data_root: str | None, *, new: bool = False) -> Any:
    """The run; only a command that starts one (`new`) may name a run that does not exist yet."""
    from coworkenv.pipeline.rundir import RunDir

    run = RunDir.open(run_id, data_root)
    return run if new else run.require()


@contextmanager
def progress_bar(what: str, total: int | None = None, *, unit: str = "item") -> Iterator[Callable[..., None]]:
    """Progress on stderr (stdout stays for results): a rich progress bar on a terminal; anywhere else (a log file, a
    pipe, a pod's log) plain lines at a bounded frequency (`coworkenv.progress.ProgressLines`: done/total, the rate
    per `unit`, the time left). The callable advances it, or sets its total when called with `total=` (for work whose
    size is known only once it starts)."""
    from rich.console import Console
    from rich.progress import Progress

    console = Console(stderr=True)
    if not console.is_terminal:
        from coworkenv.progress import progress_lines

        with progress_lines(what, total, write=_stderr_line, unit=unit) as lines:
            yield lines
        return
    with Progress(console=console, transient=True) as progress:  # stderr stays for errors
        bar = progress.add_task(what, total=total)

        def step(n: int = 1, *_: Any, total: int | None = None) -> None:
            if total is not None:
                progress.update(bar, total=total)
            else:
                progress.advance(bar, n)

        yield step


def _stderr_line(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def endpoint_outside_airflow(config: EndpointSettings) -> Any:
    """The job's LLM endpoint in a command (None when it has none); an Airflow connection cannot be read here."""
    if config.llm_conn_id and not config.llm_base_url:
        raise CoworkEnvError(
            "llm_conn_id names an Airflow connection, which only Airflow runs can read: give llm_base_url instead"
        )
    if config.judge_conn_id:
        raise CoworkEnvError(
            "judge_conn_id names an Airflow connection, which only Airflow runs can read: "
            "set COWORKENV_JUDGE_BASE_URL and COWORKENV_JUDGE_MODEL instead"
        )
    return config.llm()


@app.command()
@with_config_options(SynthesisConfig)
def synthesize(settings: dict[str, Any], run_id: NewRunIdOpt = None, data_root: DataRootOpt = None) -> None:
    """Run the whole factory to a published release, without Airflow: plan → generate → validate (sandboxed) → repair →
    rollout → build → gate → publish. The same settings and run id publish the same release as the DAG."""
    from coworkenv.pipeline.synthesis import synthesize as run_all

    config = synthesis_config(settings)
    llm = endpoint_outside_airflow(config)
    run_id = run_id or new_run_id()
    typer.echo(f"run {run_id}")
    manifest = run_all(
        config, run_id, data_root, llm=llm, on_stage=lambda stage, result: typer.echo(f"  {stage}: {_summary(result)}")
    )
    typer.echo(
        f"published release {manifest.release_id}: " + ", ".join(f"{t} {n}" for t, n in manifest.row_counts.items())
    )


def _summary(result: Any) -> str:
    if isinstance(result, list):
        return f"{len(result)} shard(s), {sum(s.get('tasks', 0) for s in result)} task(s)"
    if hasattr(result, "release_id"):
        return result.release_id
    if isinstance(result, dict):
        return ", ".join(f"{k} {_scalar(v)}" for k, v in result.items() if _scalar(v) is not None) or "done"
    return str(result)


def _scalar(value: Any) -> str | None:
    """A value of a stage's result as a summary shows it: plain values as they are, a gate's statistics as its count
    of expectations met; anything else is left out."""
    if isinstance(value, int | float | str):
        return str(value)
    if isinstance(value, dict) and "evaluated_expectations" in value:
        return f"{value.get('successful_expectations')}/{value['evaluated_expectations']} expectations met"
    return None


@app.command()
@with_config_options(SynthesisConfig)
def generate(
    settings: dict[str, Any],
    run_id: NewRunIdOpt = None,
    data_root: DataRootOpt = None,
    plan: Annotated[
        Path | None, typer.Option(help="Use this plan (from `coworkenv plan --out`) instead of planning.")
    ] = None,
    tasks: Annotated[
        list[Path] | None, typer.Option(help="Take the tasks from these files instead of generating (repeatable).")
    ] = None,
) -> None:
    """Start a run: plan it and generate its shards (or take its tasks from files) into generated/."""
    from coworkenv.pipeline.synthesis.generate import generate_run, import_tasks
    from coworkenv.pipeline.synthesis.plan import plan_run
    from coworkenv.spec.io import load_model
    from coworkenv.synth.planner import Plan

    config = synthesis_config(settings)
    run = _open(run_id or new_run_id(), data_root, new=True)
    if tasks:
        shards = import_tasks(run, tasks, config.shards, start=config)
    else:
        llm = endpoint_outside_airflow(config)
        planned = plan_run(run, config, load_model(Plan, plan) if plan else None)
        with progress_bar("generating", sum(s["tasks"] for s in planned), unit="task") as step:
            shards = generate_run(run, planned, llm, progress=step)
    total, rejected = sum(s["tasks"] for s in shards), sum(s["rejections"] for s in shards)
    typer.echo(
        f"run {run.run_id}: {total} task(s) in {len(shards)} shard(s), {rejected} rejection(s) → {run.file('generated')}"
    )


def stage_command(job: Job, stage: Stage, command_name: str | None = None) -> Callable[..., None]:
    """The command that runs one stage of a started run (`coworkenv validate --run-id R`, `coworkenv eval trials
    --run-id R`): the stage's doc as its help, a progress bar when the stage counts its work, and the stage's summary
    of its result."""
    name = command_name or stage.name

    def command(
        run_id: Annotated[str | None, typer.Option("--run-id", help="The run (<data root>/runs/<run id>/).")] = None,
        data_root: DataRootOpt = None,
        stray: Annotated[Path | None, typer.Argument(hidden=True)] = None,
    ) -> None:
        if stray is not None or run_id is None:
            hint = (
                f" (to check task files against the grading-consistency gate: coworkenv check {stray})" if stray else ""
            )
            raise CoworkEnvError(f"`coworkenv {name}` runs a stage of a started run: give --run-id" + hint)
        run = _open(run_id, data_root)
        config = job.recorded(run) if job.recorded is not None else None
        llm = endpoint_outside_airflow(config) if stage.endpoint else None
        total = stage.total(run) if stage.total is not None else None
        try:
            with progress_bar(stage.name, total, unit=stage.unit) as step:
                inputs = StageInputs(config=config, llm=llm, progress=step)
                result = job.run(run, inputs, first=stage.name, last=stage.name)
        except CoworkEnvError as exc:
            if not hasattr(exc, "exit_code"):
                raise
            typer.echo(str(exc), err=True)  # a failed gate: its whole summary, and the Data Docs
            raise typer.Exit(exc.exit_code) from None
        typer.echo(stage.summary(run, result) if stage.summary is not None else f"run {run_id}: {_summary(result)}")

    command.__doc__ = stage.doc
    return command


for _stage in SYNTHESIS.stages[2:]:  # plan and generate start a run: `coworkenv generate`
    app.command(_stage.name)(stage_command(SYNTHESIS, _stage))
