"""`coworkenv eval`: an agent on a suite, Claw-Eval style (docs/design/evaluation.md, "Evaluation"); `eval compare` two
evaluations task by task; `eval bench` builds the held-out `coworkenv-bench` suite; `eval sft` and `eval pairs` turn an
evaluation on training tasks into training data."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from coworkenv.cli.app import app
from coworkenv.cli.options import with_config_options
from coworkenv.cli.output import console as make_console
from coworkenv.cli.pipeline import (
    DataRootOpt,
    NewRunIdOpt,
    endpoint_outside_airflow,
    new_run_id,
    progress_bar,
    stage_command,
)
from coworkenv.pipeline.config import EvaluationConfig, evaluation_config
from coworkenv.pipeline.evaluation import EVALUATION
from coworkenv.train.dpo import DPOJobConfig

eval_app = typer.Typer(
    help="Evaluate an agent on a suite (eval), compare two evaluations (eval compare), build the benchmark suite (eval bench).",
    no_args_is_help=False,
)
app.add_typer(eval_app, name="eval")

MIN_SCORE_GAP: float = DPOJobConfig.model_fields["min_score_gap"].default
"""`eval pairs` builds the pairs `train dpo` would train on by default."""

OutOpt = Annotated[
    Path | None, typer.Option("--out", help="Write the report here (default: the run's report/ folder).")
]


SUMMARY_COLUMNS = (
    ("pass rate", "pass_rate"),
    ("pass@k", "pass_at_k"),
    ("pass^k", "pass_hat_k"),
    ("mean score", "mean_score"),
    ("safety violations", "safety_violation_rate"),
    ("format errors", "format_error_rate"),
)


def summary_table(summary: dict[str, Any], agent: str) -> Any:
    """Overall and per-group figures of a `summary.json`, each with its 95% interval."""
    from rich.table import Table

    def figure(m: dict[str, float]) -> str:
        return f"{m['value']:.2f} [{m['lo']:.2f}, {m['hi']:.2f}]"

    table = Table("group", "tasks", *(title for title, _ in SUMMARY_COLUMNS), title=f"{agent} (95% CI)")
    for name, f in [("all", summary["overall"]), *summary.get("groups", {}).items()]:
        table.add_row(name, str(f["n_tasks"]), *(figure(f[key]) for _, key in SUMMARY_COLUMNS))
    return table


def comparison_table(result: Any, base: str = "base", candidate: str = "candidate") -> Any:
    """Mean score of both sides overall, per group and per capability, with the paired delta's interval and p-value."""
    from rich.table import Table

    table = Table(
        "slice",
        "tasks",
        base,
        candidate,
        "delta [95% CI]",
        "p",
        title=f"mean score by group and capability ({result.test})",
    )
    slices = [
        ("all", result.overall),
        *((f"group {k}", v) for k, v in result.groups.items()),
        *result.capabilities.items(),
    ]
    for name, s in slices:
        d = s.mean_score
        table.add_row(
            name,
            str(s.n_tasks),
            f"{d.base:.3f}",
            f"{d.candidate:.3f}",
            f"{d.value:+.3f} [{d.lo:+.3f}, {d.hi:+.3f}]",
            f"{d.p_value:.3g}",
        )
    return table


@eval_app.callback(invoke_without_command=True)
@with_config_options(EvaluationConfig)
def evaluate(
    ctx: typer.Context,
    settings: dict[str, Any],
    run_id: NewRunIdOpt = None,
    data_root: DataRootOpt = None,
    out: OutOpt = None,
) -> None:
    """Evaluate an agent on a suite: contamination check, k trials per task, eval_results rows, the `evaluated` gate,
    an `eval` release, a report (HTML with plots, summary.json) and the capability profile. The same --run-id resumes."""
    if ctx.invoked_subcommand is not None:
        return

    from coworkenv.pipeline.evaluation import evaluate as run_all
    from coworkenv.pipeline.evaluation import summary_of
    from coworkenv.pipeline.rundir import RunDir

    config = evaluation_config(settings)
    llm = endpoint_outside_airflow(config)  # the model: llm_model, else the one `openai:<model>` names
    run_id = run_id or new_run_id().replace("cli__", "eval__")
    console = make_console()

    def on_stage(stage: str, result: Any) -> None:
        if stage == "prepare":  # printed once the settings, the agent and the suite are known to be good
            step(total=result["tasks"] * config.trials)
            console.print(f"evaluation {run_id}: {config.agent} on {config.suite}, {config.trials} trial(s) per task")
            console.print(
                f"  suite {result['name']}: {result['tasks']} task(s); contamination check against "
                f"{', '.join(result['training_releases']) or 'no training release'}: clean"
            )
        elif stage == "trials":
            console.print(f"  trials: {result['trials']} played, {result['passed']} passed, {result['failed']} crashed")
        elif stage == "gate":
            console.print("  gate evaluated: passed")

    with progress_bar("playing", None, unit="trial") as step:
        manifest = run_all(config, run_id, data_root, llm=llm, out=out, progress=step, on_stage=on_stage)
    summary = summary_of(RunDir.open(run_id, data_root), out)
    console.print(summary_table(summary, summary.get("agent", config.agent)))
    report = Path(out) if out is not None else RunDir.open(run_id, data_root).file("report")
    console.print(
        f"release {manifest.release_id} (kind eval); report: {report / 'report.html'}; profile: {report / 'profile.json'}"
    )


@eval_app.command()
def compare(
    base: Annotated[str, typer.Argument(help="The base evaluation: its release id or run id.")],
    candidate: Annotated[str, typer.Argument(help="The candidate evaluation: its release id or run id.")],
    data_root: DataRootOpt = None,
    out: Annotated[
        Path | None, typer.Option("--out", help="Write a comparison report (HTML, PNG, comparison.json) here.")
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap and the permutation test.")] = 0,
) -> None:
    """Paired per-task comparison of two evaluations: the score delta with a bootstrap CI and a permutation p-value,
    and the per-capability and per-group deltas."""
    from coworkenv.eval.compare import compare as compare_rows
    from coworkenv.eval.metrics import summarize
    from coworkenv.pipeline.evaluation import eval_rows

    a, b = eval_rows(base, data_root), eval_rows(candidate, data_root)
    result = compare_rows(a, b, seed=seed)
    console = make_console()
    o = result.overall
    console.print(
        f"{result.candidate_agent} ({candidate}) against {result.base_agent} ({base}) on {result.n_paired} paired task(s)"
        + (
            f"; unpaired: {result.only_base} only in the base, {result.only_candidate} only in the candidate"
            if result.only_base or result.only_candidate
            else ""
        )
    )
    for name, d in (("mean score", o.mean_score), ("pass rate", o.pass_rate)):
        verdict = "significant" if d.p_value < 0.05 else "not significant"
        console.print(
            f"  {name}: {d.base:.3f} → {d.candidate:.3f}, delta {d.value:+.3f} [{d.lo:+.3f}, {d.hi:+.3f}], "
            f"p = {d.p_value:.4g} ({verdict} at 0.05)"
        )
    console.print(comparison_table(result))
    if out is not None:
        from coworkenv.eval.report import write_report

        title = f"{result.candidate_agent} against {result.base_agent}"
        write_report(out, summarize(b, seed=seed), b, comparison=result, title=title)
        console.print(f"comparison report: {out / 'report.html'}")


@eval_app.command()
def bench(
    n: Annotated[int, typer.Option("--n", min=3, max=10_000, help="Tasks in the suite (before validation).")] = 300,
    seed: Annotated[int, typer.Option(help="Suite seed (drawn from the reserved benchmark range).")] = 0,
    workers: Annotated[int, typer.Option(min=1, max=64, help="Sandboxed validation workers.")] = 2,
    data_root: DataRootOpt = None,
) -> None:
    """Build the held-out `coworkenv-bench` suite (reserved seeds, held-out phrasings, validated in the sandbox) and
    publish it as a release of kind `benchmark`."""
    from coworkenv.eval.suite import build_bench

    with progress_bar("validating", n, unit="task") as step:
        built = build_bench(n=n, seed=seed, workers=workers, data_root=data_root, progress=step)
    groups = ", ".join(f"{g} {c}" for g, c in built.suite.composition().get("group", {}).items())
    typer.echo(
        f"published benchmark release {built.release_id}: {built.valid} valid task(s) of {built.generated} generated"
        + (f" ({groups})" if groups else "")
        + (f"; rejected: {built.invalid_by_code}" if built.invalid else "")
    )


@eval_app.command()
def sft(
    run_id: Annotated[str, typer.Option("--run-id", help="The evaluation run whose trials to sample.")],
    out: Annotated[Path, typer.Option("--out", help="The Parquet file to write (TRL-ready `sft` rows).")],
    threshold: Annotated[
        float,
        typer.Option(min=0.0, max=1.0, help="Keep trials scoring at least this (default 1.0: every check passed)."),
    ] = 1.0,
    data_root: DataRootOpt = None,
) -> None:
    """Rejection sampling: an agent's own successful trials (status ok, score ≥ threshold, deduplicated per task) as
    `sft` rows. Run the agent on training tasks (`--suite <task release>`), never on the benchmark."""
    from coworkenv.pipeline.rundir import RunDir
    from coworkenv.pipeline.training_data import sft_from_run

    result = sft_from_run(RunDir.open(run_id, data_root), out, threshold=threshold)
    typer.echo(f"{result['sft_rows']} sft row(s) from {result['trials']} trial(s) → {out}")


@eval_app.command()
def pairs(
    ref: Annotated[str, typer.Argument(help="The evaluation: its release id (kind eval) or its run id.")],
    out: Annotated[
        Path,
        typer.Option(
            "--out", help="The Parquet file to write (TRL's prompt/chosen/rejected rows, with scores and sources)."
        ),
    ],
    min_score_gap: Annotated[
        float, typer.Option(min=0.0, max=1.0, help="Pair a task only when chosen beats rejected by this much.")
    ] = MIN_SCORE_GAP,
    data_root: DataRootOpt = None,
) -> None:
    """Preference pairs for DPO: per task, the model's best passing trial (else the oracle's trajectory) against its
    lowest-scoring failing trial, same prompt. Run the model on training tasks (`--suite <task release>`), never on the
    benchmark."""
    from coworkenv.pipeline.training_data import eval_pairs
    from coworkenv.rollout.pairs import write_pairs

    found = eval_pairs(ref, data_root, min_score_gap=min_score_gap)
    written = write_pairs(found, out)
    skipped = ", ".join(f"{reason} {n}" for reason, n in found.skipped.items())
    gap = f"; mean score gap {found.mean_gap:.2f}" if found.mean_gap is not None else ""
    typer.echo(
        f"{written} pair(s) from {found.tasks} task(s) of {found.source} (chosen: {written - found.oracle_chosen} the model's own, "
        f"{found.oracle_chosen} the oracle's{gap})" + (f"; no pair: {skipped}" if skipped else "") + f" → {out}"
    )


for _stage in EVALUATION.stages[1:]:  # prepare starts a run: `coworkenv eval`
    eval_app.command(_stage.name)(stage_command(EVALUATION, _stage, f"eval {_stage.name}"))
