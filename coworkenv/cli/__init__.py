"""The `coworkenv` command. Bad input → one line on stderr and exit code 2, never a traceback."""

from coworkenv.cli.app import app, main

__all__ = ["app", "main"]
