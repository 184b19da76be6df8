"""The `coworkenv` command: the Typer app and its error handling."""

from __future__ import annotations

import errno
import json
import sys
from pathlib import Path
from typing import Annotated, Any, NoReturn

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


ProfileOpt = Annotated[
    str | None,
    typer.Option(
        "--profile",
        help="embedded (SQLite, LocalExecutor) or cluster (Postgres, CeleryExecutor with Redis, `default` and `gpu` "
        "queues). Default: $COWORKENV_AIRFLOW_PROFILE, else embedded.",
    ),
]


@app.command("airflow-env")
def airflow_env(profile: ProfileOpt = None) -> None:
    """Print `export` lines for Airflow in one profile (this repo's dags/ and plugins/)."""
    from coworkenv.airflow_env import airflow_env as profile_env
    from coworkenv.airflow_env import shell_exports

    typer.echo(shell_exports(profile_env(profile)))


@app.command("airflow-init")
def airflow_init(profile: ProfileOpt = None) -> None:
    """Make a profile's Airflow ready to start: its metadata database created where missing (Postgres: through the
    server's `postgres` database), migrated, and the `gpu` pool sized. Safe to run again."""
    import os
    import subprocess

    from coworkenv.airflow_env import COMMANDS, create_database
    from coworkenv.airflow_env import airflow_env as profile_env

    env = profile_env(profile)
    url = env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"]
    made = create_database(url)
    typer.echo(f"metadata database: {'created' if made else 'already there'}", err=True)
    for line in COMMANDS["init"]:
        typer.echo(f"+ {line}", err=True)
        done = subprocess.run(
            ["bash", "-c", line], env={**os.environ, **env}, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        if done.returncode != 0:
            tail = [text for text in done.stdout.splitlines() if text.strip()][-1:] or ["no output"]
            fail(f"{' '.join(line.split()[:3])}: exit code {done.returncode}: {tail[0]}")
    typer.echo(f"Airflow ({env['AIRFLOW__CORE__EXECUTOR']}) is ready: home {env['AIRFLOW_HOME']}", err=True)


def one_line(text: str) -> str:
    """A message as one printable line: whitespace runs (newlines too) as one space, unencodable characters escaped."""
    return " ".join(text.split()).encode("utf-8", "backslashreplace").decode("utf-8")


def fail(message: str, code: int = 2) -> NoReturn:
    sys.stderr.write(f"error: {one_line(redact(message))}\n")
    sys.stderr.flush()
    sys.exit(code)


def _option_error(exc: typer.TyperException) -> NoReturn:
    """Option parsing and the like: the offending option or command, on one line (typer would print a usage box)."""
    ctx = getattr(exc, "ctx", None)
    command = ctx.command_path if ctx is not None else "coworkenv"
    if type(exc).__name__ == "NoArgsIsHelpError":  # `coworkenv` or `coworkenv schema` alone: the help, then why
        sys.stdout.write(exc.format_message() + "\n")
        fail(f"{command}: give a command (listed above)")
    hint = f" (see {command} --help)" if ctx is not None else ""
    fail(f"{command}: {exc.format_message()}{hint}")


def main(args: list[str] | None = None) -> None:
    """The one error boundary of every command. Bad input or environment → exit code 2 and one line on stderr:
    `CoworkEnvError` (the library's refusals), typer's option errors, and `OSError`s (a path that cannot be read or
    written, a full disk) or `MemoryError`. Any other exception is a bug: it propagates with its traceback (exit 1)."""
    import importlib
    import os
    import pkgutil

    import coworkenv.cli as package
    from coworkenv.airflow_env import HF_OFFLINE

    for (
        name,
        value,
    ) in HF_OFFLINE.items():  # never a download at run time, however the command is started (an explicit 0 stays)
        os.environ.setdefault(name, value)

    for module in pkgutil.iter_modules(package.__path__):  # every command module registers on import
        importlib.import_module(f"coworkenv.cli.{module.name}")

    args = sys.argv[1:] if args is None else args
    for (
        arg
    ) in args:  # undecodable bytes arrive as lone surrogates: no output (JSON, Parquet, a run's config) can hold them
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            fail(f"argument {arg!r} is not valid UTF-8: CoworkEnv takes UTF-8 paths, names and settings")
    try:
        code = app(args=args, prog_name="coworkenv", standalone_mode=False)
    except CoworkEnvError as exc:
        fail(str(exc))
    except typer.TyperException as exc:  # typer's own click: UsageError, BadParameter, NoSuchOption, …
        _option_error(exc)
    except typer.Abort:
        fail("aborted", 130)
    except OSError as exc:
        if exc.errno == errno.EPIPE:  # the reader of our output went away (`| head`): nothing to report
            sys.exit(1)
        where = f"{exc.filename}: " if exc.filename else ""
        fail(f"{where}{exc.strerror or exc}")
    except MemoryError:
        fail("out of memory")
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
