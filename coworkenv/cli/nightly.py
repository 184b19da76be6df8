"""`coworkenv nightly`: one turn of the closed loop without Airflow (docs/design/training.md, "Nightly loop"), the same
stages the `coworkenv_nightly` DAG runs."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any

import typer

from coworkenv.cli.app import app
from coworkenv.cli.options import with_config_options
from coworkenv.cli.pipeline import (
    DataRootOpt,
    NewRunIdOpt,
    RunIdOpt,
    endpoint_outside_airflow,
    new_run_id,
    progress_bar,
)
from coworkenv.pipeline.config import NightlyConfig, nightly_config
from coworkenv.pipeline.nightly import NIGHTLY


def stage_line(stage: str, result: dict[str, Any]) -> str:
    """What a nightly stage's command prints of its result: the stage's summary in the job's declaration."""
    summary = NIGHTLY.stage(stage).summary
    return summary(None, result) if summary is not None else str(result)


@app.command()
@with_config_options(NightlyConfig)
def nightly(settings: dict[str, Any], run_id: NewRunIdOpt = None, data_root: DataRootOpt = None) -> None:
    """One turn of the closed loop: profile → plan → synthesize → gate → rollouts (rejection sampling) → gate → train →
    evaluate on the held-out suite → gate → promote or keep → new profile. The same --run-id resumes a stopped run."""
    from coworkenv.cli.evaluation import comparison_table
    from coworkenv.cli.output import console as make_console
    from coworkenv.eval.compare import Comparison
    from coworkenv.pipeline.nightly import nightly as run_all
    from coworkenv.pipeline.nightly import nightly_file
    from coworkenv.pipeline.rundir import RunDir

    config = nightly_config(settings)
    llm = endpoint_outside_airflow(config)
    run_id = run_id or new_run_id().replace("cli__", "nightly__")
    console = make_console()
    console.print(
        f"nightly run {run_id}: {config.model_name}, {config.budget} task(s), {config.plan} plan, {config.method}"
    )

    def on_stage(stage: str, result: Any) -> None:
        resumed = " (finished earlier)" if result.get("resumed") else ""
        console.print(f"  {stage}{resumed}: {stage_line(stage, result)}")

    decision = run_all(
        config, run_id, data_root, llm=llm, on_stage=on_stage, progress=progress_bar
    )  # trials and training steps
    report = RunDir.open(run_id, data_root)
    comparison = Comparison.model_validate_json(
        nightly_file(report, "report", "comparison.json").read_text(encoding="utf-8")
    )
    console.print(comparison_table(comparison, "before", "after"))
    console.print(f"before/after report: {decision['report']}")


@app.command("nightly-stage")
def nightly_stage(
    stage: Annotated[str, typer.Argument(help=f"The stage: {', '.join(NIGHTLY.names())}.")],
    run_id: RunIdOpt,
    data_root: DataRootOpt = None,
) -> None:
    """One stage of a nightly run that has started, with its recorded settings: what the training pod runs when the
    `coworkenv_nightly` DAG trains on Kubernetes (docs/operations.md). The stages before it must have finished; a
    finished stage is not run again."""
    from coworkenv.pipeline.kubernetes import RESULT_FILE_ENV
    from coworkenv.pipeline.nightly import read_config, run_stage
    from coworkenv.pipeline.rundir import RunDir, write_json

    NIGHTLY.position(stage)  # an unknown stage is refused before the run is read
    llm = endpoint_outside_airflow(read_config(RunDir.open(run_id, data_root)))
    result = run_stage(run_id, stage, data_root, llm=llm, progress=progress_bar)  # in a pod: lines in its log
    result_file = os.environ.get(RESULT_FILE_ENV)
    if result_file:  # in a pod, the operator's sidecar reads it as the task's XCom
        write_json(Path(result_file), result)
    resumed = " (finished earlier)" if result.get("resumed") else ""
    typer.echo(f"nightly {run_id} {stage}{resumed}: {stage_line(stage, result)}")
