"""Progress as plain lines, for output that is not a terminal: a log file, a pod's log, an Airflow task's log.

A terminal gets the command's rich progress bar (`coworkenv.cli.pipeline.progress_bar`); anything else gets
`ProgressLines`, which turns the same calls into lines such as

    playing: 37/96 (39%), 12.4 s/trial, ETA 12:11
    training: 50/200 (25%), 1.7/s, ETA 1:28
    importing tasks: 310, 95.2/s                       (no total known)
    playing: 96/96 (100%), 11.9 s/trial, done in 19:02

written through a `write(line)` callable (stderr, `logger.info`). A line is written when at least `interval_s`
(30 s) have passed since the last one (or the start), or when a further `share` (10%) of the total is done and at
least `min_gap_s` (5 s) have passed; a final line when the total is reached or the work ends, and a `stopped` line
when it fails after a line has been written. So a job of a few seconds writes only its final line, a minute's job a
line every 5-10 s, and a 20-minute one a line every half minute and at each tenth, each with the rate and the time
left. Lines are written as progress is reported (there is no timer thread): a job reports after each item. The rate
counts from the first report on, so neither the work before it (loading a model) nor trials a resumed run had
finished (reported at once) skew the time left; the final line's is the average over the whole time.

Library stages that take a `progress` callback and get none log these lines at INFO through the logger
`coworkenv.progress` (`given_or_logged`, `logged()`): Airflow's task log shows them (docs/design/pipeline.md, "Logs"); a
program that configures no logging, such as the `coworkenv` command (which draws its own), shows none.
"""

from __future__ import annotations

import logging
import math
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any, Protocol

Step = Callable[..., None]
"""A progress callback: `step(n=1)` advances by n; `step(total=N)` sets the total (work whose size is known late)."""


class Bars(Protocol):
    """(what, total, unit) → a context whose value is a `Step`: a progress display per piece of work (the command's
    `progress_bar`, `logged()`)."""

    def __call__(self, what: str, total: int | None = None, *, unit: str = "item") -> AbstractContextManager[Step]: ...


LOG = logging.getLogger(__name__)
"""`coworkenv.progress`: progress lines of stages run without a callback (apart from the stages' own summaries)."""

INTERVAL_S = 30.0
MIN_GAP_S = 5.0
SHARE = 0.10


def duration(seconds: float) -> str:
    """`m:ss`, or `h:mm:ss` from an hour on."""
    whole = max(0, round(seconds))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def rate_text(per_s: float, unit: str = "item") -> str:
    """Items per second, or seconds per item when that is under one a second."""
    if per_s >= 1:
        return f"{per_s:.1f}/s" if per_s < 100 else f"{per_s:.0f}/s"
    each = 1 / per_s
    return f"{each:.1f} s/{unit}" if each < 100 else f"{each:.0f} s/{unit}"


class ProgressLines:
    """A `Step` that writes progress lines at a bounded frequency (module docstring). `clock`: seconds, monotonic
    (tests pass a fake one). Call `finish()` when the work is done (`stop()` when it failed), or use `progress_lines`."""

    def __init__(
        self,
        what: str,
        total: int | None = None,
        *,
        write: Callable[[str], Any],
        clock: Callable[[], float] = time.monotonic,
        unit: str = "item",
        interval_s: float = INTERVAL_S,
        min_gap_s: float = MIN_GAP_S,
        share: float = SHARE,
    ):
        self.what, self.total, self.unit = what, total, unit
        self.write, self.clock = write, clock
        self.interval_s, self.min_gap_s, self.share = interval_s, min_gap_s, share
        self.done = 0
        self.started = clock()
        self.first: tuple[float, int, int] | None = None
        """(time, done, n) at the first report: the rate counts what is done after it, over the time since."""
        self.last_line: float | None = None
        self.last_mark = 0
        """The `share` steps reached at the last line (or at the start)."""
        self.final = False
        self._lock = threading.Lock()

    def __call__(self, n: int = 1, *_: Any, total: int | None = None) -> None:
        with self._lock:
            now = self.clock()
            if total is not None:
                self.total = total
                if self.done < total:
                    self.final = False
                return
            self.done += n
            if self.first is None:
                self.first = (now, self.done, n)
            if self.final:
                return
            if self.total is not None and self.done >= self.total:
                self._write(now, final=True)
            elif self._due(now):
                self._write(now)

    def _mark(self) -> int:
        if not self.total or self.share <= 0:
            return -1
        return math.floor(self.done / self.total / self.share + 1e-9)

    def _due(self, now: float) -> bool:
        since = now - (self.last_line if self.last_line is not None else self.started)
        if since >= self.interval_s:
            return True
        return since >= self.min_gap_s and self._mark() > self.last_mark

    def rate(self, now: float, *, overall: bool = False) -> float | None:
        """Items per second: what was done after the first report, over the time since it. While that report is the
        only one, no rate yet: a batch engine finishes many items together after minutes of loading a model, and
        a resumed run reports the trials a killed run had finished at once. `overall` (the final line's): all done since the start
        but such a first report, over the time since the start."""
        if self.first is None:
            return None
        at, done, n = self.first
        if overall:
            counted = self.done - (n if n > 1 else 0)
            return counted / (now - self.started) if counted > 0 and now > self.started else None
        if self.done > done and now > at:
            return (self.done - done) / (now - at)
        return None  # one report is no rate: its item may have come with many (a batch) after minutes of loading

    def line(self, now: float, *, final: bool = False, stopped: bool = False) -> str:
        """The progress line at `now`."""
        if self.total is not None:
            pct = math.floor(100 * self.done / self.total) if self.total else 100
            parts = [f"{self.done}/{self.total} ({pct}%)"]
        else:
            parts = [str(self.done)]
        rate = self.rate(now, overall=final or stopped)
        if rate:
            parts.append(rate_text(rate, self.unit))
        if stopped:
            parts.append(f"stopped after {duration(now - self.started)}")
        elif final:
            parts.append(f"done in {duration(now - self.started)}")
        elif rate and self.total is not None and self.done < self.total:
            parts.append(f"ETA {duration((self.total - self.done) / rate)}")
        return f"{self.what}: " + ", ".join(parts)

    def _write(self, now: float, *, final: bool = False, stopped: bool = False) -> None:
        self.last_line, self.last_mark, self.final = now, self._mark(), final or stopped
        self.write(self.line(now, final=final, stopped=stopped))

    def finish(self) -> None:
        """The work is done: the final line, unless it has been written (the total was reached)."""
        with self._lock:
            if not self.final:
                self._write(self.clock(), final=True)

    def stop(self) -> None:
        """The work failed: a `stopped` line, if any line was written before (a command that fails at once prints
        its error alone)."""
        with self._lock:
            if self.last_line is not None and not self.final:
                self._write(self.clock(), stopped=True)


PROGRESS_LINE = re.compile(
    r"(?P<line>[A-Za-z][\w()-]*(?: [\w()-]*\w)*: \d+(?:/\d+ \(\d+%\))?(?:, [\d.]+ ?(?:s/\w+|/s))?(?:, (?:ETA|done in|stopped after) [\d:]+))"
    r"(?:\s+\[[\w.]+\](?:\s+\w+=\S*)*)?\s*$"
)
"""A line `ProgressLines.line` writes, found in a log line: after whatever prefix the logger adds, before the logger's
name and `key=value` fields that Airflow's structured log appends."""


def progress_in(log_line: str) -> str | None:
    """The progress line a log line ends with (`PROGRESS_LINE`), or None: how a parent process that runs a stage
    elsewhere (`airflow dags test`, a pod) passes its progress on while the rest of the log goes to a file."""
    found = PROGRESS_LINE.search(log_line)
    return found["line"] if found else None


@contextmanager
def progress_lines(
    what: str, total: int | None = None, *, write: Callable[[str], Any], **options: Any
) -> Iterator[ProgressLines]:
    """`ProgressLines` for the `with` block: the final line when it ends, `stopped` when it raises."""
    lines = ProgressLines(what, total, write=write, **options)
    try:
        yield lines
    except BaseException:
        lines.stop()
        raise
    lines.finish()


def logged(logger: logging.Logger = LOG, level: int = logging.INFO, **options: Any) -> Bars:
    """`Bars` that write progress lines through `logger` (default `coworkenv.progress`)."""

    def bars(what: str, total: int | None = None, *, unit: str = "item") -> AbstractContextManager[Step]:
        return progress_lines(what, total, write=lambda line: logger.log(level, "%s", line), unit=unit, **options)

    return bars


@contextmanager
def given_or_logged(
    progress: Step | None, what: str, total: int | None = None, *, unit: str = "item", logger: logging.Logger = LOG
) -> Iterator[Step]:
    """The caller's `progress` callback as it is, or, when there is none, progress lines logged through `logger` at
    INFO (a stage run by Airflow, whose task log shows them)."""
    if progress is not None:
        yield progress
        return
    with progress_lines(what, total, write=lambda line: logger.info("%s", line), unit=unit) as lines:
        yield lines
