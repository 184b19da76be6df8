"""`coworkenv demo`: the whole factory on the embedded default, readable in one screen."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Annotated

import typer

from coworkenv.cli.app import app
from coworkenv.cli.core import check_with_progress, reports_table

DEMO_CONF = {"n": 60, "seed": 1, "shards": 2, "workers": 2, "repair_rounds": 3}
DEMO_MART = "select family, n_tasks, first_pass_valid_share, valid_share from valid_share_by_family order by family"


def _airflow(args: list[str], env: dict[str, str], log: Path) -> bool:
    with log.open("a") as out:
        return subprocess.run([str(Path(sys.executable).parent / "airflow"), *args], env=env, stdout=out, stderr=subprocess.STDOUT).returncode == 0


@app.command()
def demo(
    tasks: Annotated[Path, typer.Argument(help="Hand-written tasks to gate first.")] = Path("examples/tasks"),
    airflow: Annotated[bool, typer.Option(help="Run the synthesis DAG on the embedded Airflow.")] = True,
    n: Annotated[int, typer.Option("--n", min=1, max=10_000, help="Tasks the synthesis run generates.")] = DEMO_CONF["n"],
) -> None:
    """Gate the example tasks (oracle 1.0, empty 0.0, prohibited ⇒ 0), then run the synthesis DAG on the embedded
    Airflow and show the release it published, its row counts and a SQL mart over it."""
    from rich.console import Console
    from rich.table import Table

    console = Console()
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
