"""A gate's findings as data: each expectation's outcome and, for a failed one, what failed — its counts, the
observed value and up to `MAX_EXAMPLES` examples, ids first — read off Great Expectations' validation results."""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel, ConfigDict

MAX_EXAMPLES = 5


class FailedExpectation(BaseModel):
    """One expectation that did not hold."""

    model_config = ConfigDict(frozen=True)

    table: str
    rule: str
    """The suite's short name for the rule (`meta.rule`), e.g. `oracle_scores_1`."""
    expectation: str
    """GX expectation type, e.g. `expect_column_values_to_be_in_set`."""
    column: str | None = None
    """The column checked (for single-column expectations)."""
    columns: list[str] = []
    """Every column the expectation reads (pair and compound expectations name several)."""
    description: str = ""
    row_condition: str | None = None
    unexpected_count: int | None = None
    """Rows that broke the rule (None for table-level expectations and errors)."""
    element_count: int | None = None
    """Rows checked (after the row condition)."""
    examples: list[Any] = []
    """Up to five offending values or rows (rows carry the table's id columns)."""
    message: str


class ExpectationOutcome(BaseModel):
    """One expectation of a gate, held or not: a line of the gate's report page."""

    model_config = ConfigDict(frozen=True)

    table: str
    rule: str
    expectation: str
    columns: list[str] = []
    description: str = ""
    row_condition: str | None = None
    success: bool
    observed: str
    """What GX measured, in words: `0 of 12 rows unexpected`, `observed 12`, or why it could not be evaluated."""
    examples: list[Any] = []
    """Up to five offending values or rows (failures only)."""


def _plain(value: Any) -> Any:
    """JSON-friendly: numpy scalars → Python, tuples/arrays → lists, NaN → None."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    tolist = getattr(value, "tolist", None)
    if callable(tolist) and not isinstance(value, (str, bytes)):
        return _plain(tolist())
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def _exception_message(info: Any) -> str | None:
    if not isinstance(info, dict) or not info:
        return None
    if "raised_exception" in info:
        if info.get("raised_exception"):
            return str(info.get("exception_message") or "exception").strip().splitlines()[0]
        return None
    for nested in info.values():  # keyed by metric id
        message = _exception_message(nested)
        if message:
            return message
    return None


def expectation_columns(kwargs: dict[str, Any]) -> list[str]:
    cols = [kwargs[k] for k in ("column", "column_A", "column_B") if kwargs.get(k)]
    cols += list(kwargs.get("column_list") or [])
    return [str(c) for c in cols]


def _condition_text(condition: Any) -> str | None:
    """`n_violations > 0` for a GX Condition (results carry it serialized as a dict)."""
    if condition is None or isinstance(condition, str):
        return condition
    if isinstance(condition, dict):
        from great_expectations.expectations.row_conditions import deserialize_row_condition

        try:
            condition = deserialize_row_condition(condition)
        except (TypeError, ValueError):
            return str(condition)
    return repr(condition)


def _ids_first(example: Any, ids: tuple[str, ...]) -> Any:
    if not isinstance(example, dict):
        return example
    return {**{k: example[k] for k in ids if k in example}, **{k: v for k, v in example.items() if k not in ids}}


def _examples(result: dict[str, Any], ids: tuple[str, ...]) -> list[Any]:
    examples: list[Any] = []
    if result.get("partial_unexpected_index_list"):
        examples = result["partial_unexpected_index_list"]
    elif result.get("partial_unexpected_list"):
        examples = result["partial_unexpected_list"]
    elif isinstance(result.get("details"), dict) and "mismatched" in result["details"]:
        mismatched = result["details"]["mismatched"] or {}
        examples = list(mismatched.get("missing") or [])
    elif "observed_value" in result:
        examples = [result["observed_value"]]
    return [_ids_first(example, ids) for example in _plain(list(examples)[:MAX_EXAMPLES])]


def _observed(result: dict[str, Any], error: str | None, examples: list[Any]) -> str:
    """What GX measured, in words."""
    unexpected = result.get("unexpected_count")
    element_count = result.get("element_count")
    if error:
        return f"could not be evaluated: {error}"
    if unexpected is not None:
        of = f" of {element_count}" if element_count is not None else ""
        return f"{unexpected}{of} rows unexpected"
    if "mismatched" in (result.get("details") or {}):
        return f"missing columns: {', '.join(map(str, examples))}" if examples else "every column present"
    return f"observed {_plain(result.get('observed_value'))!r}"


def _target(item: Any) -> tuple[str, list[str], str, str | None]:
    """(rule, columns, description, row condition) of a result's expectation."""
    config = item.expectation_config
    kwargs = dict(config.kwargs)
    rule = str((config.meta or {}).get("rule") or config.type)
    description = str(getattr(config, "description", None) or "")
    return rule, expectation_columns(kwargs), description, _condition_text(kwargs.get("row_condition"))


def outcome_of(table: str, item: Any, failure: FailedExpectation | None) -> ExpectationOutcome:
    rule, columns, description, row_condition = _target(item)
    examples = failure.examples if failure is not None else []
    observed = _observed(item.result or {}, _exception_message(item.exception_info), examples)
    return ExpectationOutcome(
        table=table,
        rule=rule,
        expectation=item.expectation_config.type,
        columns=columns,
        description=description,
        row_condition=row_condition,
        success=failure is None,
        observed=observed,
        examples=examples,
    )


def failure_of(table: str, item: Any, ids: tuple[str, ...] = ()) -> FailedExpectation:
    config = item.expectation_config
    rule, columns, description, row_condition = _target(item)
    result = item.result or {}
    error = _exception_message(item.exception_info)
    examples = _examples(result, ids)
    mismatched = "mismatched" in (result.get("details") or {})

    target = ", ".join(columns) if columns else "table"
    where = f" where {row_condition}" if row_condition else ""
    message = f"{table}.{rule} ({config.type} on {target}{where}): {_observed(result, error, examples)}"
    if description:
        message += f" — expected: {description}"
    if examples and not error and not mismatched:
        message += f"; examples: {examples!r}"
    return FailedExpectation(
        table=table,
        rule=rule,
        expectation=config.type,
        column=dict(config.kwargs).get("column"),
        columns=columns,
        description=description,
        row_condition=row_condition,
        unexpected_count=result.get("unexpected_count"),
        element_count=result.get("element_count"),
        examples=examples,
        message=message,
    )
