"""Trial records (docs/design/agents-and-rollouts.md, "Rollouts"): one per (task, trial), everything a trial left behind — the
conversation, the trace of every turn and call, the workspace audit log, the final snapshot diff, the grade — and
the rows the release tables take from it."""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from coworkenv.episode.session import EpisodeSession
from coworkenv.grading.score import CheckResult, Grade, grade
from coworkenv.redact import safe_message, short_error
from coworkenv.spec.task import TaskSpec

Status = Literal["ok", "failed"]
ERROR_CHARS = 2000


def trial_seed(seed: int, task_id: str, trial: int) -> int:
    """The seed of one trial: a stable hash of (run seed, task id, trial), the same on every machine and run."""
    digest = hashlib.sha256(f"{seed}\x00{task_id}\x00{trial}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1  # 63 bits: fits an int64 column and every RNG


class TrialRecord(BaseModel):
    """One trial of an agent on a task. A failed trial (`status="failed"`, `error` set) scores 0: its grade's
    completion, safety and robustness are those of what happened before it failed (a prohibited call still counts),
    its `score` is 0 and `passed` false; a trial with no evidence at all (the sandbox killed it) has the empty grade."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    task_id: str
    trial: int = Field(ge=0)
    agent: str = Field(description="The agent's label: `oracle`, `random`, `hf:<dir name>`, `openai:<model>`.")
    model: str = Field("", description="The model behind the agent ('' for scripted agents).")
    seed: int = Field(description="The trial's seed (`trial_seed`), handed to the agent.")
    status: Status
    error: str | None = Field(None, description="Why a failed trial failed: `<code>: <reason>`.")
    messages: list[dict[str, Any]] = Field(description="The conversation in OpenAI chat format.")
    trace: list[dict[str, Any]] = Field(
        description="Per assistant turn: latency_s, prompt_tokens, completion_tokens, format_error and its calls "
        "(tool, arguments, status, code, latency_s)."
    )
    audit: list[dict[str, Any]] = Field(
        description="The workspace audit log (`AuditEntry.to_dict()`), as grading saw it."
    )
    diff: dict[str, Any] = Field(description="The final snapshot's diff from the initial workspace.")
    user_errors: list[Any] = Field(default_factory=list, description="Errors of the simulated user (not the agent's).")
    grade: Grade
    wall_s: float = Field(description="Wall-clock seconds the trial took.")
    n_turns: int = Field(description="Assistant turns taken.")

    @property
    def key(self) -> tuple[str, int]:
        return self.task_id, self.trial

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def n_format_errors(self) -> int:
        return sum(1 for turn in self.trace if turn.get("format_error"))

    @property
    def prompt_tokens(self) -> int:
        return sum(int(turn.get("prompt_tokens") or 0) for turn in self.trace)

    @property
    def completion_tokens(self) -> int:
        return sum(int(turn.get("completion_tokens") or 0) for turn in self.trace)

    def to_json(self) -> str:
        """One line of JSON (no newline inside): a line of the trials file."""
        return self.model_dump_json()

    @classmethod
    def from_json(cls, text: str | bytes) -> TrialRecord:
        return cls.model_validate_json(text)

    def without_timings(self) -> dict[str, Any]:
        """The record with every timing zeroed: what two runs of a deterministic agent must agree on."""
        data = self.model_dump(mode="json")
        data["wall_s"] = 0.0
        for turn in data["trace"]:
            turn["latency_s"] = 0.0
            for call in turn["calls"]:
                call["latency_s"] = 0.0
        return data


def zero_score(g: Grade) -> Grade:
    """A failed trial's grade: what happened, but score 0 and not passed."""
    return g.model_copy(update={"score": 0.0, "passed": False})


def empty_grade(spec: TaskSpec, reason: str) -> Grade:
    """The grade of a trial that left no evidence: nothing passed, nothing violated, score 0."""
    checks = [
        CheckResult(id=c.id, kind=c.kind, passed=False, weight=c.weight, reason=reason[:200]) for c in spec.checks
    ]
    return Grade(
        task_id=spec.id, completion=0.0, safety=1.0, robustness=0.0, score=0.0, passed=False, checks=checks, empty=True
    )


def error_text(code: str, reason: Any) -> str:
    """`<code>: <reason>`, fit to store (redacted, no traceback, no host path)."""
    text = (
        short_error(reason, ERROR_CHARS)
        if isinstance(reason, BaseException)
        else safe_message(str(reason), ERROR_CHARS)
    )
    return f"{code}: {text}" if text else code


def session_record(
    session: EpisodeSession,
    *,
    agent: str,
    model: str,
    trial: int,
    seed: int,
    error: str | None = None,
    user_errors: list[Any] | None = None,
) -> TrialRecord:
    """The record of a session that ended (or was stopped): graded from its evidence. `error` (or an episode that ran
    past its wall-clock limit) makes it a failed trial."""
    spec = session.spec
    if error is None and session.ending == "wall":
        error = f"wall_timeout: the episode ran past its wall-clock limit of {session.wall_s:g} s"
        if session.clock == "own":
            error = f"wall_timeout: the episode's own time (its replies, tool calls and user replies) ran past its limit of {session.wall_s:g} s"
    try:
        trajectory, evidence = session.finish()
    except Exception as exc:  # noqa: BLE001 - what the agent produced cannot even be stored as a trajectory
        reason = error or error_text("bad_output", exc)
        return failed_record(
            spec,
            agent=agent,
            model=model,
            trial=trial,
            seed=seed,
            error=reason,
            wall_s=session.elapsed(),
            n_turns=session.n_turns,
            trace=session.trace(),
        )
    g = grade(spec, evidence)
    errors = list(user_errors if user_errors is not None else session.episode.user.errors)
    return TrialRecord(
        task_id=spec.id,
        trial=trial,
        agent=agent,
        model=model,
        seed=seed,
        status="failed" if error else "ok",
        error=error,
        messages=trajectory.to_dict()["messages"],
        trace=session.trace(),
        audit=[c.to_dict() for c in evidence.calls],
        diff=evidence.diff,
        user_errors=[e if isinstance(e, str | dict) else str(e) for e in errors],
        grade=zero_score(g) if error else g,
        wall_s=session.elapsed(),
        n_turns=session.n_turns,
    )


def failed_record(
    spec: TaskSpec,
    *,
    agent: str,
    model: str,
    trial: int,
    seed: int,
    error: str,
    wall_s: float = 0.0,
    n_turns: int = 0,
    trace: list[dict[str, Any]] | None = None,
) -> TrialRecord:
    """A trial that left no usable evidence (the sandbox stopped it, its output could not be read): the empty grade."""
    return TrialRecord(
        task_id=spec.id,
        trial=trial,
        agent=agent,
        model=model,
        seed=seed,
        status="failed",
        error=error,
        messages=[],
        trace=trace or [],
        audit=[],
        diff={},
        grade=empty_grade(spec, error),
        wall_s=wall_s,
        n_turns=n_turns,
    )


def messages_hash(messages: list[dict[str, Any]]) -> str:
    return hashlib.sha256(json.dumps(messages, sort_keys=True, ensure_ascii=False).encode()).hexdigest()
