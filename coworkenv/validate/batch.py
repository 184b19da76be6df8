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
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from pydantic import ValidationError

from coworkenv.errors import CoworkEnvError
from coworkenv.redact import safe_message
from coworkenv.sandbox.choices import IN_PROCESS, RUNTIME_CHOICES
from coworkenv.spec.task import TaskSpec
from coworkenv.validate.battery import rejected, validate_spec, validate_spec_json
from coworkenv.validate.jobs import JOB_NAME
from coworkenv.validate.verdict import TaskValidation

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
    if not getattr(result, "ok", False):
        code = getattr(result, "error_code", None) or "sandbox_error"
        error = safe_message(str(getattr(result, "error", "") or ""), 2000)  # stored and published: no traceback, no host path
        return rejected(task_id, code, {"error_code": code, "error": error}, f"the sandboxed battery did not finish: {code}: {error[:300]}")
    output = getattr(result, "output", None)
    try:
        if isinstance(output, str | bytes | bytearray):
            return TaskValidation.model_validate_json(output)
        return TaskValidation.model_validate(output)
    except (ValidationError, ValueError, TypeError) as exc:
        return rejected(task_id, "sandbox_bad_output", {"error_code": "sandbox_bad_output", "error": safe_message(str(exc), 2000)},
                        "the sandboxed battery returned something that is not a TaskValidation")  # fmt: skip


def _with_name(validation: TaskValidation, name: str | None) -> TaskValidation:
    """Label a result that has no task id (unparseable input) with where it came from."""
    if validation.task_id or not name:
        return validation
    results = [r.model_copy(update={"task_id": name}) for r in validation.results]
    return validation.model_copy(update={"task_id": name, "results": results})


def validate_tasks(
    items: Iterable[str | TaskSpec | dict[str, Any]],
    *,
    workers: int = 2,
    runtime: str = "auto",
    progress: Callable[..., Any] | None = None,
    names: Sequence[str] | None = None,
    limits: Any = None,
    budget_s: float | None = None,
) -> list[TaskValidation]:
    """One TaskValidation per item, in input order.

    `budget_s`: the wall-clock seconds the sandboxed battery may spend on one task (default: the `validate` job's
    budget); a task over it gets a `sandbox_timeout` verdict and the others are unaffected.

    Items are raw JSON texts (untrusted; parsed only inside the battery), TaskSpecs or dicts. `progress(n)` is
    called as tasks finish. `names[i]` labels item i when it has no task id of its own (e.g. `file:line`).
    """
    if runtime not in RUNTIME_CHOICES:
        raise CoworkEnvError(f"unknown runtime {runtime!r}; choose one of {', '.join(RUNTIME_CHOICES)}")
    items = list(items)
    out: list[TaskValidation] = []
    if runtime == IN_PROCESS:
        for item in items:
            out.append(_validate_local(item))
            if progress is not None:
                progress(1)
    else:
        from coworkenv.sandbox.pool import run_jobs  # lazily: the sandbox machinery is only needed here

        payloads = [_payload(item) for item in items]
        step = (lambda *args, **kwargs: progress(1)) if progress is not None else None
        results = run_jobs(JOB_NAME, payloads, workers=workers, runtime=runtime, limits=limits, progress=step, budget_s=budget_s)
        by_index = {getattr(r, "index", i): r for i, r in enumerate(results)}
        for i, payload in enumerate(payloads):
            result = by_index.get(i)
            if result is None:
                out.append(rejected(guess_task_id(payload), "sandbox_error", {"error_code": "sandbox_error", "error": "no result"},
                                    "the sandbox returned no result for this task"))  # fmt: skip
            else:
                out.append(_from_job(result, payload))
    if names is not None:
        out = [_with_name(v, names[i] if i < len(names) else None) for i, v in enumerate(out)]
    return out
