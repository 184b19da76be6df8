"""Validate many tasks: in-process (`runtime="none"`) or one sandboxed `validate` job per task (`coworkenv.sandbox.pool`).

Untrusted task text is parsed only where the battery runs: with a sandbox runtime the parent hands the raw
JSON text to the jobs and reads back TaskValidation JSON.

A job that fails in the sandbox (`JobResult.ok` is False: timeout, memory, crash, …) becomes an invalid
TaskValidation with a single dedicated row whose `code` is the sandbox's `error_code` (e.g. `sandbox_timeout`),
severity `mandatory`, not discriminating, and `details = {"error_code", "error"}` (the error without its traceback,
redacted, host paths reduced to file names: the validations table is published). It is not put in the
`schema` position: the task may be a perfectly good spec that the battery could not finish on.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, TypeVar

from pydantic import ValidationError

from coworkenv.errors import CoworkEnvError
from coworkenv.judge.endpoint import JudgeLike, active_judge
from coworkenv.judge.sandbox_jobs import run_jobs_judged
from coworkenv.redact import safe_message
from coworkenv.sandbox.choices import IN_PROCESS, RUNTIME_CHOICES
from coworkenv.spec.task import TaskSpec
from coworkenv.spec.verdict import TaskValidation
from coworkenv.validate.battery import rejected, validate_spec, validate_spec_json
from coworkenv.validate.jobs import JOB_NAME, JUDGED_JOB_NAME
from coworkenv.validate.judging import spec_pairs

_LEADING_ID = re.compile(r'^\s*\{\s*"id"\s*:\s*("(?:[^"\\\n]|\\.){1,400}")')


def guess_task_id(text: str) -> str:
    """The task id of raw JSON text without parsing it: only when `"id"` is the object's first key (as
    `TaskSpec.to_json` writes it); "" otherwise."""
    match = _LEADING_ID.match(text[:1000]) if isinstance(text, str) else None
    if not match:
        return ""
    try:
        value = json.loads(match.group(1))
    except ValueError:
        return ""
    return value[:200] if isinstance(value, str) else ""


def _payload(item: Any) -> str:
    if isinstance(item, TaskSpec):
        return item.to_json()
    if isinstance(item, str):
        return item
    if isinstance(item, bytes | bytearray):
        return bytes(item).decode("utf-8", errors="replace")
    return json.dumps(item, ensure_ascii=False, allow_nan=False)


def _validate_local(item: Any) -> TaskValidation:
    if isinstance(item, TaskSpec | dict):
        return validate_spec(item)
    return TaskValidation.model_validate(validate_spec_json(item if isinstance(item, str) else _payload(item)))


def _from_job(result: Any, payload: str) -> TaskValidation:
    task_id = guess_task_id(payload)
    if result is None:
        return rejected(
            task_id,
            "sandbox_error",
            {"error_code": "sandbox_error", "error": "no result"},
            "the sandbox returned no result for this task",
        )
    if not getattr(result, "ok", False):
        code = getattr(result, "error_code", None) or "sandbox_error"
        error = safe_message(
            str(getattr(result, "error", "") or ""), 2000
        )  # stored and published: no traceback, no host path
        return rejected(
            task_id,
            code,
            {"error_code": code, "error": error},
            f"the sandboxed battery did not finish: {code}: {error[:300]}",
        )
    return _validation(getattr(result, "output", None), task_id)


def _validation(output: Any, task_id: str) -> TaskValidation:
    try:
        if isinstance(output, str | bytes | bytearray):
            return TaskValidation.model_validate_json(output)
        return TaskValidation.model_validate(output)
    except (ValidationError, ValueError, TypeError) as exc:
        return rejected(
            task_id,
            "sandbox_bad_output",
            {"error_code": "sandbox_bad_output", "error": safe_message(str(exc), 2000)},
            "the sandboxed battery returned something that is not a TaskValidation",
        )


# --- rubric verdicts for the sandbox (docs/design/contracts.md, "Judge") -------------------------------------------


def _validate_judged(
    payloads: list[str], judge: JudgeLike, run: Callable[[str, list[str], Any], list[Any]], step: Any
) -> list[TaskValidation]:
    """The sandboxed battery with the judge's verdicts on every pair the spec lets the parent foresee
    (`judge.sandbox_jobs`, the protocol rollouts use too); a task whose battery asked about another pair runs once
    more with that verdict too."""

    from coworkenv.sandbox.pool import JobResult

    def on_pool(job: str, texts: list[str], on_result: Callable[[Any], None]) -> None:
        for index, result in enumerate(run(job, texts, None)):
            missing = JobResult(index=index, ok=False, error_code="sandbox_error", error="no result")
            on_result(result if result is not None else missing)

    results = run_jobs_judged(
        JUDGED_JOB_NAME,
        [json.dumps({"task": p}, ensure_ascii=False) for p in payloads],
        [spec_pairs(p) for p in payloads],
        judge=judge,
        run=on_pool,
        on_result=(lambda _: step()) if step is not None else None,
    )
    return [_from_job(result, payload) for result, payload in zip(results, payloads, strict=True)]


def _with_name(validation: TaskValidation, name: str | None) -> TaskValidation:
    """Label a result that has no task id (unparseable input) with where it came from."""
    if validation.task_id or not name:
        return validation
    results = [r.model_copy(update={"task_id": name}) for r in validation.results]
    return validation.model_copy(update={"task_id": name, "results": results})


Item = str | TaskSpec | dict[str, Any]
R = TypeVar("R")


def validate_tasks(
    items: Iterable[Item],
    *,
    workers: int = 2,
    runtime: str = "auto",
    progress: Callable[..., Any] | None = None,
    names: Sequence[str] | None = None,
    limits: Any = None,
    budget_s: float | None = None,
) -> list[TaskValidation]:
    """One TaskValidation per item, in input order: `iter_validations` over one batch of every item.

    `budget_s`: the wall-clock seconds the sandboxed battery may spend on one task (default: the `validate` job's
    budget); a task over it gets a `sandbox_timeout` verdict and the others are unaffected.

    Items are raw JSON texts (untrusted; parsed only inside the battery), TaskSpecs or dicts. `progress(n)` is
    called as tasks finish. `names[i]` labels item i when it has no task id of its own (e.g. `file:line`).
    """
    name = (lambda i: names[i] if i < len(names) else None) if names is not None else None
    batches = iter_validations(
        [list(items)], workers=workers, runtime=runtime, progress=progress, name=name, limits=limits, budget_s=budget_s
    )
    return [v for batch in batches for v in batch]


def iter_validations(
    batches: Iterable[Sequence[Item]],
    *,
    workers: int = 2,
    runtime: str = "auto",
    progress: Callable[..., Any] | None = None,
    name: Callable[[int], str | None] | None = None,
    limits: Any = None,
    budget_s: float | None = None,
) -> Iterator[list[TaskValidation]]:
    """`validate_tasks` a batch at a time: one list of TaskValidations per batch of items, in order, so a caller that
    streams its tasks holds one batch (docs/design/pipeline.md, "Bounded memory"). `name(i)` labels the i-th item of
    the whole stream when it has no task id of its own.

    With a sandbox runtime one pool of `workers` sandboxed workers serves every batch (started with the first, closed
    when the iteration ends), and within a batch each task goes to whichever worker is free."""
    if runtime not in RUNTIME_CHOICES:
        raise CoworkEnvError(f"unknown runtime {runtime!r}; choose one of {', '.join(RUNTIME_CHOICES)}")
    validate = (
        _in_process(progress) if runtime == IN_PROCESS else _sandboxed(workers, runtime, limits, budget_s, progress)
    )
    start = 0
    try:
        for batch, last in _flag_last(batches):
            out = validate(batch, alone=last and not start)
            if name is not None:
                out = [_with_name(v, name(start + i)) for i, v in enumerate(out)]
            start += len(out)
            yield out
    finally:
        validate.close()


def _flag_last(items: Iterable[R]) -> Iterator[tuple[R, bool]]:
    """Each item with whether it is the last one (one item of look-ahead)."""
    it = iter(items)
    for current in it:
        for following in it:
            yield current, False
            current = following
        yield current, True


class _in_process:
    def __init__(self, progress: Callable[..., Any] | None):
        self.progress = progress

    def __call__(self, items: Sequence[Item], alone: bool) -> list[TaskValidation]:
        out = []
        for item in items:
            out.append(_validate_local(item))
            if self.progress is not None:
                self.progress(1)
        return out

    def close(self) -> None:
        pass


class _sandboxed:
    """The sandboxed battery over batches, on one pool started with the first batch; with an active judge the
    rubric verdicts are asked and shipped batch by batch."""

    def __init__(
        self, workers: int, runtime: str, limits: Any, budget_s: float | None, progress: Callable[..., Any] | None
    ):
        self.workers, self.runtime, self.limits, self.budget_s = workers, runtime, limits, budget_s
        self.step = (lambda *args, **kwargs: progress(1)) if progress is not None else None
        self.judge = active_judge()
        self.job = JOB_NAME if self.judge is None else JUDGED_JOB_NAME
        self.pool: Any = None
        self.alone = False

    def run(self, job: str, texts: list[str], report: Any) -> list[Any]:
        if not texts:
            return []
        if self.pool is None:  # lazily: the sandbox machinery is only needed here
            from coworkenv.sandbox.jobs import JOBS
            from coworkenv.sandbox.pool import WorkerPool

            warm = [job] if JOBS.get(job).warmup is not None else []
            size = (
                max(1, min(self.workers, len(texts))) if self.alone else self.workers
            )  # more batches follow: every worker
            self.pool = WorkerPool(workers=size, runtime=self.runtime, limits=self.limits, warm=warm, jobs=[job])
        results = self.pool.map(job, texts, progress=report, budget_s=self.budget_s)
        by_index = {getattr(r, "index", i): r for i, r in enumerate(results)}
        return [by_index.get(i) for i in range(len(texts))]

    def __call__(self, items: Sequence[Item], alone: bool) -> list[TaskValidation]:
        self.alone = alone
        payloads = [_payload(item) for item in items]
        if self.judge is None:  # rubrics are not graded in the sandbox, as in-process without a judge
            return [
                _from_job(result, payload)
                for result, payload in zip(self.run(self.job, payloads, self.step), payloads, strict=True)
            ]
        return _validate_judged(payloads, self.judge, self.run, self.step)

    def close(self) -> None:
        if self.pool is not None:
            self.pool.close()
