"""A wall-clock budget for work that runs in this process (`coworkenv run`, `grade`, `check` on trusted files): the
sandbox's workers bound every task they run, and this bounds the same work when no sandbox is used, so that no
check or replay anywhere runs longer than a bounded time (docs/design/agents-and-rollouts.md, "Sandbox")."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from coworkenv.errors import CoworkEnvError
from coworkenv.sandbox.protocol import LimitHit

IN_PROCESS_BUDGET_S = 60.0
"""Default budget of one task's in-process work: a task within the caps needs well under a second."""


class BudgetExceeded(CoworkEnvError):
    """Work that ran past its wall-clock budget; it was interrupted."""


@contextmanager
def wall_budget(seconds: float | None, what: str) -> Iterator[None]:
    """Interrupt the body after `seconds` of wall-clock time with `BudgetExceeded` naming `what`. The timer is a
    signal, so it works only on the main thread; elsewhere (an Airflow task's thread, say) the body runs unbounded
    and the caller's own limits apply. `None` or 0: no budget."""
    if not seconds or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(_signum: int, _frame: Any) -> None:
        raise LimitHit("wall-clock")  # a BaseException: the body's own `except Exception` cannot swallow it

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    except LimitHit:
        raise BudgetExceeded(f"{what}: ran past its budget of {seconds:g} s and was stopped") from None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
