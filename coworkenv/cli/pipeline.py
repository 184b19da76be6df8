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
    from coworkenv.pipeline.synthesize import synthesize as run_all

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
    from coworkenv.pipeline.generate import generate_run, import_tasks
    from coworkenv.pipeline.plan import plan_run
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


@app.command()
def validate(run_id: RunIdOpt, data_root: DataRootOpt = None) -> None:
    """Run the validation battery, in the sandbox, on the run's generated tasks."""
    from coworkenv.pipeline.rundir import count_jsonl
    from coworkenv.pipeline.validate import validate_shard

    run = _open(run_id, data_root)
    shards = run.shard_ids()
    total = sum(count_jsonl(run.shard_file("generated", s, "tasks")) for s in shards)
    with progress_bar("validating", total, unit="task") as step:
        results = [validate_shard(run, shard, progress=step) for shard in shards]
    valid = sum(r["valid"] for r in results)
    codes: dict[str, int] = {}
    for r in results:
        for code, n in r["rejections_by_code"].items():
            codes[code] = codes.get(code, 0) + n
    rejected = ", ".join(f"{c} {n}" for c, n in sorted(codes.items(), key=lambda kv: -kv[1]))
    typer.echo(f"run {run_id}: {valid}/{total} task(s) valid" + (f"; rejected for {rejected}" if rejected else ""))


@app.command()
def repair(run_id: RunIdOpt, data_root: DataRootOpt = None) -> None:
    """Repair the run's invalid tasks (rule-based repairers in the sandbox, then the LLM when configured)."""
    from coworkenv.pipeline.repair import repair_run
    from coworkenv.pipeline.rundir import validated

    run = _open(run_id, data_root)
    config = run.config()
    invalid = sum(1 for _, v in validated(run) if not v.valid)
    with progress_bar("repairing", invalid, unit="task") as step:
        result = repair_run(run, endpoint_outside_airflow(config), progress=step)
    rate = result["metrics"].get("rescue_rate", 0.0) if result["metrics"] else 0.0
    typer.echo(
        f"run {run_id}: {result['repaired']} of {result['invalid']} invalid task(s) repaired (rescue rate {rate:.0%})"
    )


@app.command()
def rollout(run_id: RunIdOpt, data_root: DataRootOpt = None) -> None:
    """Roll out the oracle on every valid task of the run, in the sandbox; graded trajectories → rollouts/."""
    from coworkenv.pipeline.rollout import rollout_run

    result = rollout_run(_open(run_id, data_root))
    typer.echo(f"run {run_id}: {result['trajectories']} trajectories, {result['passed']} passing")


@app.command()
def build(run_id: RunIdOpt, data_root: DataRootOpt = None) -> None:
    """Build the release tables of the run (staged under tables/ for the gates)."""
    from coworkenv.pipeline.build import build_tables

    rows = build_tables(_open(run_id, data_root))
    typer.echo(f"run {run_id}: " + ", ".join(f"{t} {n}" for t, n in rows.items()))


@app.command()
def gate(
    run_id: Annotated[str | None, typer.Option("--run-id", help="The run whose staged tables to check.")] = None,
    data_root: DataRootOpt = None,
    tasks: Annotated[Path | None, typer.Argument(hidden=True)] = None,
) -> None:
    """Check the run's staged tables with the Great Expectations gates; exit 1 (and publish nothing) if one fails."""
    from coworkenv.pipeline.gate import gate_tables
    from coworkenv.quality.gates import GateFailed

    if tasks is not None or run_id is None:
        hint = (
            f" (to check task files against the grading-consistency gate: coworkenv check {tasks})"
            if tasks is not None
            else ""
        )
        raise CoworkEnvError("`coworkenv gate` checks a run's staged tables: give --run-id" + hint)
    run = _open(run_id, data_root)
    try:
        stats = gate_tables(run)
    except GateFailed as exc:
        typer.echo(str(exc), err=True)
        raise typer.Exit(1) from None
    for stage, s in stats.items():
        typer.echo(
            f"gate {stage}: {s.get('successful_expectations')}/{s.get('evaluated_expectations')} expectations hold"
        )
    typer.echo(f"Data Docs: {run.file('quality', 'data_docs')}")


@app.command()
def publish(run_id: RunIdOpt, data_root: DataRootOpt = None) -> None:
    """Publish the run's staged tables as its release (atomic; LATEST flips last)."""
    from coworkenv.pipeline.publish import publish as publish_run

    manifest = publish_run(_open(run_id, data_root))
    typer.echo(
        f"published release {manifest.release_id}: " + ", ".join(f"{t} {n}" for t, n in manifest.row_counts.items())
    )
