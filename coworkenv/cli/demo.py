"""`coworkenv demo`: the whole factory on the embedded default, readable in one screen."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from coworkenv.cli.app import app
from coworkenv.cli.core import check_with_progress, reports_table
from coworkenv.cli.nightly import stage_line
from coworkenv.cli.output import console as make_console
from coworkenv.cli.output import rule

DEMO_CONF = {"n": 60, "seed": 1, "shards": 2, "workers": 2, "repair_rounds": 3}
DEMO_BENCH_N = 24
"""Tasks of the demo's held-out suite (the default coworkenv-bench has 300)."""
DEMO_NIGHTLY = {"budget": 60, "trials": 1, "eval_trials": 2, "sft_steps": 40, "max_new_tokens": 64, "seed": 1}
"""One turn of the loop sized for a 2-core laptop (the defaults are a night's work)."""
DEMO_MART = "select family, n_tasks, first_pass_valid_share, valid_share from valid_share_by_family order by family"


def _airflow(args: list[str], env: dict[str, str], log: Path, echo: Callable[[str], Any] | None = None) -> bool:
    """Airflow's output goes to `log`; the progress lines in it (trials, training steps) also to `echo`, so a long
    step is not silent (`coworkenv.progress.progress_in`)."""
    from coworkenv.progress import progress_in

    with log.open("a") as out:
        proc = subprocess.Popen(
            [str(Path(sys.executable).parent / "airflow"), *args],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
        )
        assert proc.stdout is not None
        for line in proc.stdout:
            out.write(line)
            shown = progress_in(line) if echo is not None else None
            if shown is not None:
                out.flush()
                echo(f"  {shown}")
        return proc.wait() == 0


_ERROR_LINE = re.compile(r"\[error\s*\]|^\s*[\w.]*(Error|Exception)\b: ")


def _failed(console: Any, what: str, log: Path) -> typer.Exit:
    """Say what failed and why (the log's last error lines: a failed task's exception, Airflow's error records), not
    only where the log is."""
    errors = [
        line.strip()
        for line in log.read_text(encoding="utf-8", errors="replace").splitlines()
        if _ERROR_LINE.search(line)
    ]
    console.print(f"[red]{what} failed[/]; full log: {log}")
    for line in errors[-5:]:
        console.print(f"  {line[:500]}", markup=False, highlight=False, soft_wrap=True)
    return typer.Exit(1)


def _echo(console: Any) -> Callable[[str], None]:
    return lambda line: console.print(line, markup=False, highlight=False, soft_wrap=True)


@app.command()
def demo(
    tasks: Annotated[Path, typer.Argument(help="Hand-written tasks to gate first.")] = Path("examples/tasks"),
    airflow: Annotated[
        bool, typer.Option(help="Run the synthesis and evaluation DAGs on the embedded Airflow.")
    ] = True,
    n: Annotated[int, typer.Option("--n", min=1, max=10_000, help="Tasks the synthesis run generates.")] = DEMO_CONF[
        "n"
    ],
) -> None:
    """Gate the example tasks (oracle 1.0, empty 0.0, prohibited ⇒ 0), run the synthesis DAG on the embedded Airflow
    and show the release it published, its row counts and a SQL mart over it; then run one turn of the nightly loop
    (the coworkenv_nightly DAG) from the offline tiny model on a small held-out suite and show the before/after table."""
    from rich.table import Table

    console = make_console()
    rule(console, "[bold]1. Grading-consistency gate on the example tasks (oracle and null agents, graded by replay)")
    reports = check_with_progress(tasks)
    console.print(reports_table(reports))
    failed = [r for r in reports if not r.gate_passed]
    console.print(f"{len(reports) - len(failed)}/{len(reports)} tasks pass the grading-consistency gate")
    if failed:
        raise typer.Exit(1)
    if not airflow:
        return

    from coworkenv.airflow_env import embedded_env
    from coworkenv.data.catalog import query
    from coworkenv.data.reader import read_manifest

    env = {**os.environ, **embedded_env()}
    log = Path(env["AIRFLOW_HOME"]) / "logs" / "demo.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("")
    conf = {**DEMO_CONF, "n": n}
    rule(
        console, f"[bold]2. airflow dags test coworkenv_synthesize --conf '{json.dumps(conf)}' (SQLite, LocalExecutor)"
    )
    synthesize = ["dags", "test", "coworkenv_synthesize", "--conf", json.dumps(conf)]
    ok = _airflow(["db", "migrate"], env, log) and _airflow(synthesize, env, log, _echo(console))
    if not ok:
        raise _failed(console, "the synthesis run", log)
    root = env["COWORKENV_DATA_ROOT"]
    manifest = read_manifest(root, "latest")
    console.print(
        f"plan → generate → validate → repair → rollout → build → gate → publish: [green]success[/]; full log: {log}"
    )
    rule(console, "[bold]3. The published release")
    console.print(f"release [bold]{manifest.release_id}[/] (parent: {manifest.parent or 'none'})")
    console.print(f"under {root}/releases/, LATEST → {manifest.release_id}")
    options = " ".join(f"--{k.replace('_', '-')} {v}" for k, v in conf.items())
    console.print(
        f"the same release without Airflow: coworkenv synthesize {options} --run-id '{manifest.run_id}' (run directory: {root}/runs/)"
    )
    rows = Table("table", "rows")
    for table, count in manifest.row_counts.items():
        rows.add_row(table, str(count))
    console.print(rows)
    rule(console, "[bold]4. coworkenv sql: valid share by family (marts/valid_share_by_family)")
    result = query(DEMO_MART, root, "latest")
    mart = Table(*result.column_names)
    for record in result.to_pylist():
        mart.add_row(*(f"{v:.3f}" if isinstance(v, float) else str(v) for v in record.values()))
    console.print(mart)
    evaluate_demo(console, env, log, root)


def evaluate_demo(console: Any, env: dict[str, str], log: Path, root: str) -> None:
    """Steps 5–7: a held-out suite, then one turn of the nightly loop through Airflow from the tiny model, and the
    before/after table."""
    from coworkenv.cli.evaluation import comparison_table
    from coworkenv.eval.compare import Comparison
    from coworkenv.eval.suite import build_bench
    from coworkenv.pipeline.nightly import NIGHTLY, nightly_file
    from coworkenv.pipeline.rundir import RunDir

    rule(console, f"[bold]5. A held-out suite (coworkenv eval bench --n {DEMO_BENCH_N})")
    bench = build_bench(n=DEMO_BENCH_N, data_root=root)
    groups = ", ".join(f"{g} {c}" for g, c in bench.suite.composition()["group"].items())
    console.print(
        f"benchmark release [bold]{bench.release_id}[/]: {bench.valid} tasks ({groups}), reserved seeds, held-out phrasings"
    )
    conf = {**DEMO_NIGHTLY, "suite": bench.release_id}
    rule(console, f"[bold]6. airflow dags test coworkenv_nightly --conf '{json.dumps(conf)}'")
    console.print(
        "profile → synthesize → gate → rollouts → gate → train (SFT) → evaluate → gate → promote or keep → new profile; "
        "the registry starts from the offline tiny model"
    )
    ok = _airflow(["pools", "set", "gpu", "1", "GPU stages: training, local-model rollouts"], env, log)
    before = set(Path(root, "runs").glob("*/nightly/state.json"))
    if not ok or not _airflow(
        ["dags", "test", "coworkenv_nightly", "--conf", json.dumps(conf)], env, log, _echo(console)
    ):
        raise _failed(console, "the nightly loop", log)
    # `airflow dags test` names its run itself; the run is the one that was not there before (the newest of them if a
    # scheduled nightly ran at the same time) and that got as far as the report
    made = {p: json.loads(p.read_text()) for p in set(Path(root, "runs").glob("*/nightly/state.json")) - before}
    reported = sorted((p for p, s in made.items() if "promote" in s), key=lambda p: p.stat().st_mtime)
    if not reported:
        raise _failed(console, "the nightly loop (no new run got as far as its report)", log)
    state = made[reported[-1]]
    run_id = state["evaluate"]["run_id"].removesuffix(".evaluate")
    run = RunDir.open(run_id, root)
    for stage in NIGHTLY.names():
        console.print(f"  {stage}: {stage_line(stage, state[stage])}")
    rule(console, "[bold]7. Before and after, on the held-out suite (paired by task)")
    comparison = Comparison.model_validate_json(
        nightly_file(run, "report", "comparison.json").read_text(encoding="utf-8")
    )
    console.print(comparison_table(comparison, "before", "after"))
    check = json.loads(RunDir.open(f"{run_id}.evaluate", root).file("eval", "contamination.json").read_text())
    console.print(
        f"contamination check against {', '.join(check['training_releases'])}: {len(check['contaminated_ids'])} of "
        f"{check['suite_tasks']} held-out tasks match"
    )
    console.print(
        f"{'promoted' if state['promote']['promoted'] else 'kept the current model'}: {state['promote']['reason']}"
    )
    console.print(
        f"before/after report: [bold]{state['promote']['report']}[/]; registry: coworkenv models --data-root {root}"
    )
    console.print(
        "the tiny model learns nothing worth keeping: it is here for speed. The loop on a real pretrained model, "
        "SmolLM2-135M-Instruct, and what it gains: docs/results.md; one turn of it: make loop (about an hour on two cores)"
    )
