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
from coworkenv.errors import CoworkEnvError
from coworkenv.pipeline.config import NightlyConfig, nightly_config

STAGE_LINES = {
    "profile": lambda r: f"current model {r['model']} on {r['suite']}: weakest capabilities {', '.join(r['weakest'])}",
    "synthesize": lambda r: f"{r['plan']} plan: {r['rows'].get('tasks', 0)} valid training task(s) built",
    "gate_tasks": lambda r: (
        f"gates validated + rollouts passed; release {r['release_id']} ({r['sft']} oracle conversations)"
    ),
    "rollouts": lambda r: r.get("skipped") or f"rejection sampling: {r['trials']} trial(s), {r['passed']} passed",
    "gate_rollouts": lambda r: (
        f"gate evaluated passed; {r['own_sft_rows']} own success(es) join the training data"
        if r["release_id"]
        else "no rollouts to gate"
    ),
    "train": lambda r: (
        f"trained {' → '.join(r['jobs'])}: candidate {r['candidate']} "
        + "; ".join(
            f"{x['job']} loss {x['first']:.3f} → {x['last']:.3f}" for x in r["losses"] if x["first"] is not None
        )
    ),
    "evaluate": lambda r: f"held-out evaluation: {r['trials']} trial(s), {r['passed']} passed",
    "gate_eval": lambda r: f"gate evaluated passed; release {r['release_id']}",
    "promote": lambda r: ("promoted: " if r["promoted"] else "kept the current model: ") + r["reason"],
    "new_profile": lambda r: f"next loop plans from {r['model']}'s profile: weakest {', '.join(r['weakest'])}",
}


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
        console.print(f"  {stage}{resumed}: {STAGE_LINES[stage](result)}")

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
    stage: Annotated[str, typer.Argument(help=f"The stage: {', '.join(STAGE_LINES)}.")],
    run_id: RunIdOpt,
    data_root: DataRootOpt = None,
) -> None:
    """One stage of a nightly run that has started, with its recorded settings: what the training pod runs when the
    `coworkenv_nightly` DAG trains on Kubernetes (docs/operations.md). The stages before it must have finished; a
    finished stage is not run again."""
    from coworkenv.pipeline.kubernetes import RESULT_FILE_ENV
    from coworkenv.pipeline.nightly import read_config, run_stage
    from coworkenv.pipeline.rundir import RunDir, write_json

    if stage not in STAGE_LINES:
        raise CoworkEnvError(f"unknown nightly stage {stage!r}: one of {', '.join(STAGE_LINES)}")
    llm = endpoint_outside_airflow(read_config(RunDir.open(run_id, data_root)))
    result = run_stage(run_id, stage, data_root, llm=llm, progress=progress_bar)  # in a pod: lines in its log
    result_file = os.environ.get(RESULT_FILE_ENV)
    if result_file:  # in a pod, the operator's sidecar reads it as the task's XCom
        write_json(Path(result_file), result)
    resumed = " (finished earlier)" if result.get("resumed") else ""
    typer.echo(f"nightly {run_id} {stage}{resumed}: {STAGE_LINES[stage](result)}")
