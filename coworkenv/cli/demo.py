"""`coworkenv demo`: the whole factory on the embedded default, readable in one screen."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from coworkenv.cli.app import app
from coworkenv.cli.core import check_with_progress, reports_table
from coworkenv.cli.evaluation import summary_table, wide_console
from coworkenv.pipeline.rundir import safe_name

DEMO_CONF = {"n": 60, "seed": 1, "shards": 2, "workers": 2, "repair_rounds": 3}
DEMO_BENCH_N = 24
"""Tasks of the demo's held-out suite (the default coworkenv-bench has 300)."""
DEMO_EVALS = ({"agent": "oracle", "trials": 3}, {"agent": "hf:{model}", "trials": 1, "max_new_tokens": 64})
DEMO_MART = "select family, n_tasks, first_pass_valid_share, valid_share from valid_share_by_family order by family"


def _airflow(args: list[str], env: dict[str, str], log: Path) -> bool:
    with log.open("a") as out:
        return subprocess.run([str(Path(sys.executable).parent / "airflow"), *args], env=env, stdout=out, stderr=subprocess.STDOUT).returncode == 0


@app.command()
def demo(
    tasks: Annotated[Path, typer.Argument(help="Hand-written tasks to gate first.")] = Path("examples/tasks"),
    airflow: Annotated[bool, typer.Option(help="Run the synthesis and evaluation DAGs on the embedded Airflow.")] = True,
    n: Annotated[int, typer.Option("--n", min=1, max=10_000, help="Tasks the synthesis run generates.")] = DEMO_CONF["n"],
) -> None:
    """Gate the example tasks (oracle 1.0, empty 0.0, prohibited ⇒ 0), run the synthesis DAG on the embedded Airflow
    and show the release it published, its row counts and a SQL mart over it; then evaluate the oracle and the offline
    tiny model on a small held-out suite with the evaluation DAG and show where the reports are."""
    from rich.table import Table

    console = wide_console()
    console.rule("[bold]1. Grading-consistency gate on the example tasks (oracle and null agents, graded by replay)")
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
    console.rule(f"[bold]2. airflow dags test coworkenv_synthesize --conf '{json.dumps(conf)}' (SQLite, LocalExecutor)")
    ok = _airflow(["db", "migrate"], env, log) and _airflow(["dags", "test", "coworkenv_synthesize", "--conf", json.dumps(conf)], env, log)
    if not ok:
        console.print(f"[red]the synthesis run failed[/]; full log: {log}")
        raise typer.Exit(1)
    root = env["COWORKENV_DATA_ROOT"]
    manifest = read_manifest(root, "latest")
    console.print(f"plan → generate → validate → repair → rollout → build → gate → publish: [green]success[/]; full log: {log}")
    console.rule("[bold]3. The published release")
    console.print(f"release [bold]{manifest.release_id}[/] (parent: {manifest.parent or 'none'})")
    console.print(f"under {root}/releases/, LATEST → {manifest.release_id}")
    options = " ".join(f"--{k.replace('_', '-')} {v}" for k, v in conf.items())
    console.print(f"the same release without Airflow: coworkenv synthesize {options} --run-id '{manifest.run_id}' (run directory: {root}/runs/)")
    rows = Table("table", "rows")
    for table, count in manifest.row_counts.items():
        rows.add_row(table, str(count))
    console.print(rows)
    console.rule("[bold]4. coworkenv sql: valid share by family (marts/valid_share_by_family)")
    result = query(DEMO_MART, root, "latest")
    mart = Table(*result.column_names)
    for record in result.to_pylist():
        mart.add_row(*(f"{v:.3f}" if isinstance(v, float) else str(v) for v in record.values()))
    console.print(mart)
    evaluate_demo(console, env, log, root)


def evaluate_demo(console: Any, env: dict[str, str], log: Path, root: str) -> None:
    """Steps 5–6: a held-out suite, the tiny model, and the evaluate DAG on the oracle and on the tiny model."""
    from coworkenv.data.reader import list_releases
    from coworkenv.eval.suite import build_bench
    from coworkenv.pipeline.evaluate import eval_rows
    from coworkenv.train.tiny import build_tiny_model

    console.rule(f"[bold]5. A held-out suite (coworkenv eval bench --n {DEMO_BENCH_N}) and the offline tiny model (coworkenv model tiny)")
    bench = build_bench(n=DEMO_BENCH_N, data_root=root)
    groups = ", ".join(f"{g} {c}" for g, c in bench.suite.composition()["group"].items())
    console.print(f"benchmark release [bold]{bench.release_id}[/]: {bench.valid} tasks ({groups}), reserved seeds, held-out phrasings")
    model = Path(root) / "models" / "tiny"
    if not (model / "config.json").exists():
        build_tiny_model(model)
    console.print(f"tiny model: {model} (random init, Qwen2 architecture; it knows nothing yet)")
    reports = []
    for settings in DEMO_EVALS:
        conf = {**settings, "agent": settings["agent"].format(model=model), "suite": bench.release_id}
        console.rule(f"[bold]6. airflow dags test coworkenv_evaluate --conf '{json.dumps(conf)}'")
        before = {m.release_id for m in list_releases(root)}
        if not _airflow(["dags", "test", "coworkenv_evaluate", "--conf", json.dumps(conf)], env, log):
            console.print(f"[red]the evaluation of {conf['agent']} failed[/]; full log: {log}")
            raise typer.Exit(1)
        release = next(m for m in list_releases(root) if m.release_id not in before and m.kind == "eval")
        report = Path(root) / "runs" / safe_name(release.run_id) / "report"
        check = json.loads((report.parent / "eval" / "contamination.json").read_text())
        near = (f"highest instruction similarity {check['max_similarity']:.2f}" if check["max_similarity"]
                else f"no instruction similarity near {check['threshold']}")  # candidates are scored from threshold − LSH_MARGIN on
        console.print(f"contamination check against {', '.join(check['training_releases']) or 'no training release'}: "
                      f"{len(check['contaminated_ids'])} of {check['suite_tasks']} tasks match; {near}")  # fmt: skip
        console.print(summary_table(json.loads((report / "summary.json").read_text()), conf["agent"]))
        reports.append((release.release_id, report))
    console.rule("[bold]7. coworkenv eval compare: the tiny model against the oracle, task by task")
    from coworkenv.eval.compare import compare

    (base, _), (candidate, _) = reports[1], reports[0]
    d = compare(eval_rows(base, root), eval_rows(candidate, root)).overall.mean_score
    console.print(f"mean score {d.base:.3f} (tiny model) → {d.candidate:.3f} (oracle): delta {d.value:+.3f} [{d.lo:+.3f}, {d.hi:+.3f}], "
                  f"paired sign-flip p = {d.p_value:.2g}")  # fmt: skip
    for (release_id, report), settings in zip(reports, DEMO_EVALS, strict=True):
        console.print(f"report of {settings['agent'].split(':')[0]}: [bold]{report / 'report.html'}[/] (release {release_id}; "
                      f"profile for the planner: {report / 'profile.json'})")  # fmt: skip

