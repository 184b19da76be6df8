"""Running the battery on one task, from a TaskSpec, a dict or raw JSON text; never raises on bad input."""

from __future__ import annotations

import json
import math
from typing import Any

from coworkenv.redact import safe_message, short_error
from coworkenv.spec.task import TaskSpec
from coworkenv.spec.verdict import CheckOutcome, TaskValidation
from coworkenv.validate.battery.context import MAX_SPEC_CHARS, Context
from coworkenv.validate.battery.references import schema_failure
from coworkenv.validate.codes import BATTERY, BATTERY_CODES

# --- running the battery ---------------------------------------------------------------------------------


def _outcome(task_id: str, code: str, passed: bool, details: dict[str, Any], message: str) -> CheckOutcome:
    severity, discriminating, _ = BATTERY_CODES[code]
    return CheckOutcome(
        task_id=task_id,
        code=code,
        passed=passed,
        severity=severity,
        discriminating=discriminating,
        details=_jsonable(details),
        message=clean_text(message),
    )


def clean_text(text: str) -> str:
    """Valid Unicode for files and Parquet: lone surrogates (legal in JSON escapes, not in UTF-8) become '?'."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")


def _jsonable(value: Any, depth: int = 0) -> Any:
    """Plain JSON data: valid UTF-8 strings, string keys, non-finite floats as strings, bounded depth."""
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, str):
        return clean_text(value)
    if depth >= 32:
        return clean_text(str(value)[:DETAIL_CHARS])
    if isinstance(value, dict):
        return {clean_text(str(k)): _jsonable(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_jsonable(v, depth + 1) for v in value]
    return clean_text(str(value)[:DETAIL_CHARS])


DETAIL_CHARS = 2000
"""Characters kept of a crashed check's error message (its details) and of any stray value in details."""


def _exception_details(exc: BaseException) -> dict[str, Any]:
    """A short error, not a traceback: the validations table is published, and a traceback names host paths."""
    return {"exception": type(exc).__name__, "error": safe_message(str(exc), DETAIL_CHARS)}


def run_battery(spec: TaskSpec) -> TaskValidation:
    ctx = Context(spec)
    results = []
    for code in BATTERY_CODES:
        check = BATTERY.get(code)
        try:
            passed, details, message = check.fn(ctx)
        except MemoryError:
            raise
        except (Exception, RecursionError) as exc:  # noqa: BLE001 — a crash is a failed check, not a crashed battery
            if code == "schema":
                passed, details, message = schema_failure(exc)
            else:
                passed, details, message = False, _exception_details(exc), f"{code} raised {short_error(exc, 300)}"
        results.append(_outcome(spec.id, code, passed, details, message))
    evidence_hash = ""
    try:
        evidence_hash = ctx.oracle.evidence.evidence_hash
    except Exception:  # noqa: BLE001
        pass
    return _verdict(spec.id, results, evidence_hash)


def _verdict(task_id: str, results: list[CheckOutcome], evidence_hash: str = "") -> TaskValidation:
    valid = all(r.passed for r in results if r.severity == "mandatory")
    applicable = [r for r in results if r.discriminating and r.details.get("applicable", True) is not False]
    if not any(r.code == "schema" and r.passed for r in results):
        discrimination = 0.0
    else:
        discrimination = sum(r.passed for r in applicable) / len(applicable) if applicable else 1.0
    return TaskValidation(
        task_id=task_id,
        valid=valid,
        discrimination=round(discrimination, 6),
        results=results,
        evidence_hash=evidence_hash,
    )


def _task_id_of(data: Any) -> str:
    if isinstance(data, dict):
        value = data.get("id")
        if isinstance(value, str):
            return clean_text(value[:200])
        if value is not None and not isinstance(value, dict | list):
            return clean_text(str(value)[:200])
    return ""


def rejected(task_id: str, code: str, details: dict[str, Any], message: str) -> TaskValidation:
    """A task that never reached the battery (unparseable, or its sandbox failed): one failed row, invalid.

    `code` is a battery code (`schema`) or a sandbox error code (`sandbox_timeout`, …); the latter is mandatory
    and not discriminating."""
    if code in BATTERY_CODES:
        outcome = _outcome(task_id, code, False, details, message)
    else:
        outcome = CheckOutcome(
            task_id=task_id,
            code=code,
            passed=False,
            severity="mandatory",
            discriminating=False,
            details=_jsonable(details),
            message=clean_text(message),
        )
    return TaskValidation(task_id=task_id, valid=False, discrimination=0.0, results=[outcome])


def validate_spec(spec: TaskSpec | dict[str, Any]) -> TaskValidation:
    """Run the whole battery on one task. A dict that is not a valid TaskSpec gives one failed `schema` row."""
    if isinstance(spec, TaskSpec):
        return run_battery(spec)
    task_id = _task_id_of(spec)
    if not isinstance(spec, dict):
        return rejected(
            task_id,
            "schema",
            {"errors": [{"loc": [], "msg": f"expected a JSON object, got {type(spec).__name__}", "type": "type"}]},
            f"not a valid TaskSpec: expected a JSON object, got {type(spec).__name__}",
        )
    try:
        parsed = TaskSpec.model_validate(spec)
    except (Exception, RecursionError) as exc:  # noqa: BLE001
        passed, details, message = schema_failure(exc)
        return rejected(task_id, "schema", details, message)
    return run_battery(parsed)


def validate_spec_json(text: str) -> dict[str, Any]:
    """`validate_spec` on one JSON text, returning the JSON-able TaskValidation; never raises."""
    try:
        if not isinstance(text, str | bytes | bytearray):
            raise TypeError(f"expected JSON text, got {type(text).__name__}")
        if len(text) > MAX_SPEC_CHARS:
            result = rejected(
                "",
                "schema",
                {
                    "errors": [{"loc": [], "msg": f"larger than {MAX_SPEC_CHARS} characters", "type": "too_large"}],
                    "chars": len(text),
                },
                f"not a valid TaskSpec: larger than {MAX_SPEC_CHARS} characters",
            )
            return result.model_dump(mode="json")
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as exc:
            msg = f"not valid JSON: {str(exc)[:500]}"
            result = rejected(
                "",
                "schema",
                {"errors": [{"loc": [], "msg": msg, "type": "json_invalid"}]},
                f"not a valid TaskSpec: {msg}",
            )
            return result.model_dump(mode="json")
        return validate_spec(data).model_dump(mode="json")
    except MemoryError:
        raise
    except (Exception, RecursionError) as exc:  # noqa: BLE001 — the last line of defence: still an answer
        message = f"validation crashed: {short_error(exc, 300)}"
        return rejected("", "schema", {**_exception_details(exc), "internal_error": True}, message).model_dump(
            mode="json"
        )
