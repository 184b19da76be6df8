"""Running a `code` check's program: always in a sandbox (bwrap where it works, else the rlimit runtime), its folders
mounted read-only, under the check's budget, the evidence as JSON on stdin (`program_child.py` is what runs there).

The judge stays outside: the program's questions come back with its reply, the episode's judge answers them here, and
the program runs again with the answers until it asks nothing new (`JUDGE_ROUNDS` at most) — the same table of
verdicts asked for beforehand that sandboxed episodes use, so no key or endpoint ever enters the sandbox."""

from __future__ import annotations

import json
import os
from functools import cache
from pathlib import Path
from typing import Any

from coworkenv.checks.base import Credited, Evidence, Outcome
from coworkenv.checks.kinds.rubric import NO_JUDGE

CHILD = Path(__file__).with_name("program_child.py")
JUDGE_ROUNDS = 4
"""Runs of one program at most: each may ask the judge what the answers to the last made it ask."""
MEMORY_MB = 2048
"""Address space of the program's sandbox: a benchmark's grader imports pydantic and its own package."""


def evidence_json(ev: Evidence) -> dict[str, Any]:
    """The episode as a program sees it: every call (tool, arguments, status, error), the assistant's texts in order
    (the answer last), its messages to the user, the answer, and the workspace before and after."""
    return {
        "task_id": getattr(ev, "task_id", ""),
        "calls": [call.to_dict() for call in ev.calls],
        "texts": list(ev.texts),
        "says": list(ev.says),
        "answer": ev.answer,
        "initial_state": ev.initial_state,
        "final_state": ev.final_state,
    }


def judge_score(judge: Any, criteria: str, text: str) -> float | None:
    """The judge's score in [0, 1]: its own where it gives one (`score`), else its verdict as 1 or 0; None when it
    gave no usable reply."""
    if hasattr(judge, "score"):
        return judge.score(criteria, text)
    verdict = judge.verdict(criteria, text)
    return None if verdict.passed is None else float(verdict.passed)


@cache
def _child_source() -> str:
    return CHILD.read_text(encoding="utf-8")


def _runtime(folders: tuple[Path, ...]) -> Any:
    from coworkenv.sandbox.selection import default_runtime

    runtime = default_runtime()
    if not folders:
        return runtime
    layout = runtime.layout
    return type(runtime)(layout=layout.model_copy(update={"linked_dirs": (*layout.linked_dirs, *folders)}))


def _folders(names: list[str]) -> tuple[dict[str, str], str | None]:
    """Each named folder's path, or why the check cannot be graded here."""
    found: dict[str, str] = {}
    for name in names:
        value = os.environ.get(name, "")
        if not value or not Path(value).is_dir():
            return {}, f"not graded: {name} names no folder here (the program reads it)"
        found[name] = str(Path(value).resolve())
    return found, None


def _in_new_sandbox(request: str, limits: Any, folders: dict[str, str]) -> dict[str, Any] | str:
    """The program's reply from a sandbox started for it, or why there is none."""
    result = _runtime(tuple(Path(p) for p in folders.values())).run(_child_source(), stdin=request, limits=limits)
    lines = result.stdout.strip().splitlines()
    if not result.ok or not lines:
        limit = "wall clock" if result.timed_out else result.resource_exceeded
        return f"over its {limit} limit" if limit else (result.stderr.strip().splitlines() or ["no reply"])[-1]
    return json.loads(lines[-1])


def _in_this_sandbox(request: str, limits: Any) -> dict[str, Any] | str:
    """The program's reply from a child forked in the sandbox this process runs in (a validation worker, say): a
    sandbox starts no further sandbox, and the child is held to the check's limits as a job's is."""
    from coworkenv.checks.program_child import reply
    from coworkenv.sandbox.forked import kept_fds, run_forked

    answer = run_forked(
        0, lambda payload: reply(json.loads(payload)), request, limits=limits, keep_fds=kept_fds(), nproc_relative=True
    )
    if not answer.get("ok"):
        return str(answer.get("error", "no reply")).splitlines()[0]
    output = dict(answer["output"])
    return {k: v for k, v in output.items() if k not in ("stdout", "stderr")}


def run_program(check: Any, ev: Evidence) -> Outcome:
    from coworkenv.sandbox.boot import INSIDE_ENV
    from coworkenv.sandbox.limits import Limits

    folders, missing = _folders(list(check.folders))
    if missing is not None:
        return None, missing
    limits = Limits(wall_s=check.budget_s, cpu_s=check.budget_s, memory_mb=MEMORY_MB)
    inside = os.environ.get(INSIDE_ENV) == "1"
    evidence = {**evidence_json(ev), "folders": folders}
    answers: dict[str, float] = {}
    for _ in range(JUDGE_ROUNDS):
        request = json.dumps({"program": check.program, "evidence": evidence, "answers": answers}, default=str)
        reply = _in_this_sandbox(request, limits) if inside else _in_new_sandbox(request, limits, folders)
        if isinstance(reply, str):
            return None, f"not graded: the program did not finish: {reply}"[:300]
        if "error" in reply:
            return None, f"not graded: the program failed: {reply['error']}"
        if not reply["asked"]:
            credit = reply["credit"]
            said = f": {reply['reason']}" if reply["reason"] else ""
            return Credited(credit >= check.pass_at, f"program credit {credit:.2f}{said}", credit)
        if ev.judge is None:
            return None, NO_JUDGE
        for question in reply["asked"]:
            score = judge_score(ev.judge, question["criteria"], question["text"])
            if score is None:
                return None, "not graded: the judge gave no usable reply"
            answers[question["key"]] = score
    return None, f"not graded: the program still asked the judge after {JUDGE_ROUNDS} runs"
