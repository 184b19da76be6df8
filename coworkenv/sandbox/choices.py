"""The names a sandbox runtime is chosen by, in one place: the CLI, the pipeline's config and the DAG's trigger form
offer these, and `get_runtime` accepts every one but `none`.

`none` is no sandbox at all: the caller evaluates in its own process, for trusted input only. Standard library only,
so that a DAG file can list the choices at parse time.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, get_args

RuntimeName = Literal["auto", "bwrap", "rlimit"]
RuntimeChoice = Literal[RuntimeName, "none"]

RUNTIME_NAMES: tuple[str, ...] = get_args(RuntimeName)
RUNTIME_CHOICES: tuple[str, ...] = get_args(RuntimeChoice)
IN_PROCESS = "none"


def either(names: Sequence[str]) -> str:
    """ "a, b or c": the names as a message lists them."""
    *head, last = names
    return f"{', '.join(head)} or {last}" if head else last
