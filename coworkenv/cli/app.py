"""The `coworkenv` command: the Typer app and its error handling."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from coworkenv.errors import CoworkEnvError
from coworkenv.redact import redact

app = typer.Typer(
    help="CoworkEnv: executable, verifiable training environments for tool-using coworker agents.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
schema_app = typer.Typer(help="Print the JSON Schema of a contract type.", no_args_is_help=True)
app.add_typer(schema_app, name="schema")

TaskOpt = Annotated[Path, typer.Option("--task", "-t", help="TaskSpec JSON file.")]


def print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, indent=2, ensure_ascii=False) + "\n")


@app.command("airflow-env")
def airflow_env() -> None:
    """Print `export` lines for the embedded Airflow (SQLite, LocalExecutor, this repo's dags/)."""
    from coworkenv.airflow_env import embedded_env, shell_exports

    typer.echo(shell_exports(embedded_env()))


def main() -> None:
    import importlib
    import pkgutil

    import coworkenv.cli as package

    for module in pkgutil.iter_modules(package.__path__):  # every command module registers on import
        importlib.import_module(f"coworkenv.cli.{module.name}")

    try:
        app()
    except CoworkEnvError as exc:
        typer.echo(f"error: {redact(str(exc))}", err=True)
        sys.exit(2)


if __name__ == "__main__":
    main()
