"""The trials file (docs/design/agents-and-rollouts.md, "Rollouts"): one JSON line per finished trial, appended as it finishes.

Durability rule: a record is written with one `write` of the whole line, newline last, then fsync'd; so after a kill
the file holds whole lines and at most one torn last line (no newline at its end), which `open` cuts off. A run that
starts on an existing file skips the (task, trial) keys it holds, so a killed run continues without a lost or
duplicated row. One writer at a time: the file is locked (`flock`) while a run has it open.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from pydantic import ValidationError

from coworkenv.errors import CoworkEnvError
from coworkenv.fileio import fsync_dir
from coworkenv.rollout.trial_record import TrialRecord


def read_trials(path: str | os.PathLike[str]) -> list[TrialRecord]:
    """The finished trials of a trials file, in file order (a torn last line left out; the file is not changed)."""
    records, _ = _parse(Path(path))
    return records


def _parse(path: Path) -> tuple[list[TrialRecord], int]:
    """(records, length of the whole lines): everything after the last newline is a torn write."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return [], 0
    except OSError as exc:
        raise CoworkEnvError(f"{path}: cannot read the trials file: {exc.strerror or exc}") from None
    whole = data.rfind(b"\n") + 1
    records: list[TrialRecord] = []
    seen: set[tuple[str, int]] = set()
    for number, line in enumerate(data[:whole].split(b"\n")[:-1], start=1):
        if not line.strip():
            continue
        try:
            record = TrialRecord.from_json(line)
        except (ValidationError, ValueError) as exc:
            raise CoworkEnvError(
                f"{path}, line {number}: not a trial record ({str(exc).splitlines()[0]}); is this a trials file?"
            ) from None
        if record.key in seen:
            raise CoworkEnvError(f"{path}, line {number}: trial {record.task_id}/{record.trial} appears twice")
        seen.add(record.key)
        records.append(record)
    return records, whole


class TrialStore:
    """An open trials file: `records` (what it held), `append(record)`. Use as a context manager."""

    def __init__(self, path: str | os.PathLike[str]):
        self.path = Path(path)
        self.records: list[TrialRecord] = []
        self._fd: int | None = None

    def __enter__(self) -> TrialStore:
        self.open()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def open(self) -> list[TrialRecord]:
        """Lock the file (created if absent), cut a torn last line off, and return the records it holds."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            created = not self.path.exists()
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
        except OSError as exc:
            raise CoworkEnvError(f"{self.path}: cannot open the trials file: {exc.strerror or exc}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise CoworkEnvError(f"{self.path}: another run is writing this trials file") from None
        try:
            self.records, whole = _parse(self.path)
            if os.fstat(fd).st_size > whole:  # a torn write from a killed run
                os.ftruncate(fd, whole)
                os.fsync(fd)
            if created:
                fsync_dir(self.path.parent)
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd
        return self.records

    def append(self, record: TrialRecord) -> None:
        """Write one record as one line and make it durable before returning."""
        if self._fd is None:
            raise RuntimeError("the trials file is not open")
        line = (record.to_json() + "\n").encode("utf-8")
        view = memoryview(line)
        while view:
            written = os.write(self._fd, view)
            view = view[written:]
        os.fsync(self._fd)
        self.records.append(record)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # releases the lock
            self._fd = None
