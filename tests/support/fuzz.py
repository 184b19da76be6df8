"""The malformed-input harness (tests/fuzz/): run a `coworkenv` command on hostile input, in-process through the real
`main()` or through the console script, and hold it to the CLI's contract: exit code 0 or 2 (1 where the command
reports a failed check), for 2 exactly one stderr line starting `error:`, never a traceback, no hang, and the
outputs of a failed command untouched. Every case is tallied; tests/fuzz/conftest.py prints the counts."""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import signal
import subprocess
import sys
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from tests.support import ROOT

CLI = Path(sys.executable).parent / "coworkenv"
FULL = os.environ.get("COWORKENV_FUZZ_PROFILE") == "fuzz"
"""`make fuzz`: every damage on every input; `make test` (the `ci` profile): the representative ones below."""
CASE_TIMEOUT_S = float(os.environ.get("COWORKENV_FUZZ_CASE_TIMEOUT", "60"))
"""A case still running after this long counts as a hang (generous: the 2-core CI box runs two workers)."""

TALLY: Counter[str] = Counter()
"""cases, clean_errors, successes, crashes, hangs, partial_outputs: summed over workers by tests/fuzz/conftest.py."""


class Hang(BaseException):
    """Raised into a case that ran past its time (a BaseException, so no `except Exception` in the code swallows it)."""


@dataclass
class Outcome:
    args: list[str]
    code: int | None = None
    stdout: str = ""
    stderr: str = ""
    hang: bool = False
    crash: str = ""  # the traceback of an exception that escaped main()
    seconds: float = 0.0
    problems: list[str] = field(default_factory=list)


def _on_alarm(_signum: int, _frame: object) -> None:
    raise Hang


def run_main(args: list[str], timeout: float = CASE_TIMEOUT_S) -> Outcome:
    """The command in this process, through `coworkenv.cli.main` (what the console script calls)."""
    from coworkenv.cli import main

    outcome = Outcome(args=list(args))
    out, err = io.StringIO(), io.StringIO()
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    start = time.perf_counter()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                main(list(args))
                outcome.code = 0
            except SystemExit as exc:
                outcome.code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except Hang:
        outcome.hang = True
    except BaseException:  # noqa: BLE001 — what escapes main() is exactly what the suite looks for
        outcome.crash = traceback.format_exc()
        outcome.code = 1
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    outcome.seconds = time.perf_counter() - start
    outcome.stdout, outcome.stderr = out.getvalue(), err.getvalue()
    return outcome


def run_console(args: list[str], timeout: float = CASE_TIMEOUT_S, cwd: Path = ROOT) -> Outcome:
    """The command as a user runs it: the installed console script, in a fresh process."""
    outcome = Outcome(args=list(args))
    env = {**os.environ, "COLUMNS": "200"}
    start = time.perf_counter()
    try:
        proc = subprocess.run(
            [str(CLI), *args],
            capture_output=True,
            text=True,
            errors="backslashreplace",
            env=env,
            cwd=cwd,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        outcome.hang = True
    else:
        outcome.code, outcome.stdout, outcome.stderr = proc.returncode, proc.stdout, proc.stderr
    outcome.seconds = time.perf_counter() - start
    return outcome


def snapshot(path: Path) -> dict[str, str] | None:
    """What an output path holds (file or folder, by relative name and content hash); None when absent."""
    if not path.exists() and not path.is_symlink():
        return None
    if path.is_file():
        return {".": hashlib.sha256(path.read_bytes()).hexdigest()}
    found = {}
    for p in sorted(path.rglob("*")):
        found[str(p.relative_to(path))] = hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
    return found


def judge(
    outcome: Outcome, outputs: dict[Path, dict[str, str] | None] | None = None, allowed: tuple[int, ...] = (0, 2)
) -> Outcome:
    """Check an outcome against the contract and tally it; `outputs` maps each output path to its snapshot before."""
    p = outcome.problems
    if outcome.hang:
        p.append("hang")
    elif outcome.crash:
        p.append("crash: exception escaped main()")
    else:
        if outcome.code not in allowed:
            p.append(f"crash: exit code {outcome.code}")
        if "Traceback (most recent call last)" in outcome.stderr + outcome.stdout:
            p.append("crash: traceback printed")
        if outcome.code == 2:
            lines = outcome.stderr.splitlines()
            if len(lines) != 1 or not lines[0].startswith("error: "):
                p.append(f"crash: stderr is not one `error:` line ({len(lines)} lines)")
    partial = [str(path) for path, before in (outputs or {}).items() if outcome.code != 0 and snapshot(path) != before]
    if partial:
        p.append("partial output: " + ", ".join(partial))
    TALLY["cases"] += 1
    if outcome.hang:
        TALLY["hangs"] += 1
    elif any(x.startswith("crash") for x in p):
        TALLY["crashes"] += 1
    elif outcome.code == 0:
        TALLY["successes"] += 1
    else:
        TALLY["clean_errors"] += 1
    if partial:
        TALLY["partial_outputs"] += 1
    return outcome


def explain(outcome: Outcome) -> str:
    shown = [a if len(a) <= 80 else a[:77] + "..." for a in outcome.args]
    tail = (outcome.crash or outcome.stderr)[-1500:]
    return f"coworkenv {' '.join(map(repr, shown))}: {'; '.join(outcome.problems)} (exit {outcome.code})\n{tail}"


def check(
    outcome: Outcome, outputs: dict[Path, dict[str, str] | None] | None = None, allowed: tuple[int, ...] = (0, 2)
) -> None:
    """`judge`, then fail the test with the case and what went wrong."""
    judged = judge(outcome, outputs, allowed)
    assert not judged.problems, explain(judged)


def write_tally(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(dict(TALLY)), encoding="utf-8")
