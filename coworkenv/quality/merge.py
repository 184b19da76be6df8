"""One table's GX result from the results of its parts (docs/design/pipeline.md, "Bounded memory", gate).

A stored table is judged a part at a time, so that the gate holds one part, not the table. Every rule the suites
may hold is either about one row (`ROW_WISE`: a column map or a pair of columns; the table's uniqueness too,
through the derived `key_rows`), about the column set (the same in every part) or about the row count (a sum);
`run_gate_files` refuses a suite with any other kind (`summable`). So the parts' results add up to what GX gives
over the whole table: counts are summed, the percentages recomputed as GX computes them, the examples are the first
ones in row order, and the verdict is GX's for the summed counts.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

ROW_COUNT = "expect_table_row_count_to_be_between"
COLUMN_SET = (
    "expect_table_column_count_to_equal",
    "expect_table_columns_to_match_set",
    "expect_table_columns_to_match_ordered_list",
)
ROW_WISE = frozenset(
    {
        "expect_column_values_to_not_be_null",
        "expect_column_values_to_be_null",
        "expect_column_values_to_be_in_set",
        "expect_column_values_to_not_be_in_set",
        "expect_column_values_to_be_between",
        "expect_column_values_to_match_regex",
        "expect_column_values_to_not_match_regex",
        "expect_column_values_to_be_json_parseable",
        "expect_column_value_lengths_to_be_between",
        "expect_column_pair_values_to_be_equal",
    }
)
"""Expectations that judge each row on its own: their counts add up over parts. (Uniqueness, say, does not: a
duplicate can span two parts; the suites expect it of the derived `key_rows` instead.)"""
EXAMPLE_LISTS = ("partial_unexpected_list", "partial_unexpected_index_list")


def summable(kind: str) -> bool:
    """Whether an expectation's results over parts of a table add up to its result over the whole table."""
    return kind == ROW_COUNT or kind in COLUMN_SET or kind in ROW_WISE


def merged_suite_result(parts: list[Any], examples: int) -> Any:
    """The suite result of the whole table from those of its parts (in row order), as GX's class; the first part's
    result object is reused (its metadata names the run and the batch)."""
    first = parts[0]
    if len(parts) == 1:
        return first
    # By rule, not by position: GX lists an expectation that raised first, so the order can differ between parts.
    by_rule = [{item.expectation_config.meta["rule"]: item for item in part.results} for part in parts]
    first.results = [
        _merged([found[item.expectation_config.meta["rule"]] for found in by_rule], examples) for item in first.results
    ]
    evaluated = len(first.results)
    successful = sum(1 for item in first.results if item.success)
    first.success = successful == evaluated
    first.statistics = {
        **first.statistics,
        "evaluated_expectations": evaluated,
        "successful_expectations": successful,
        "unsuccessful_expectations": evaluated - successful,
        "success_percent": successful / evaluated * 100 if evaluated else None,
    }
    return first


def _raised(item: Any) -> bool:
    info = item.exception_info or {}
    if "raised_exception" in info:
        return bool(info["raised_exception"])
    return any(isinstance(v, dict) and v.get("raised_exception") for v in info.values())


def _merged(items: list[Any], examples: int) -> Any:
    first = items[0]
    failed = next((item for item in items if _raised(item)), None)
    if failed is not None:  # a rule that cannot be evaluated on one part cannot be on the whole
        return failed
    kind = first.expectation_config.type
    result = dict(first.result or {})
    if kind == ROW_COUNT:
        rows = sum(int((item.result or {}).get("observed_value") or 0) for item in items)
        result["observed_value"] = rows
        first.result, first.success = result, _row_count_holds(first.expectation_config.kwargs, rows)
    elif kind in ROW_WISE:
        first.result = _map_result(result, [item.result or {} for item in items], examples)
        first.success = _map_success(first.result, first.expectation_config.kwargs.get("mostly"))
    elif kind not in COLUMN_SET:  # `run_gate_files` refuses such a suite before reading a row
        raise ValueError(f"cannot add up {kind} over parts of a table")
    return first


def _row_count_holds(kwargs: Any, rows: int) -> bool:
    lo, hi = kwargs.get("min_value"), kwargs.get("max_value")
    below = lo is not None and (rows <= lo if kwargs.get("strict_min") else rows < lo)
    above = hi is not None and (rows >= hi if kwargs.get("strict_max") else rows > hi)
    return not (below or above)


def _map_result(result: dict[str, Any], parts: list[dict[str, Any]], examples: int) -> dict[str, Any]:
    """A column map result (GX's `_format_map_output`, SUMMARY) of the parts' counts and examples."""
    elements = sum(part["element_count"] for part in parts)
    unexpected = sum(part["unexpected_count"] for part in parts)
    result.update(element_count=elements, unexpected_count=unexpected)
    total = unexpected / elements * 100 if elements > 0 else None
    if "missing_count" in result:
        missing = sum(part["missing_count"] for part in parts)
        nonmissing = elements - missing
        share = unexpected / nonmissing * 100 if elements > 0 and nonmissing > 0 else None
        result.update(
            missing_count=missing,
            missing_percent=missing / elements * 100 if elements > 0 else None,
            unexpected_percent_total=total,
            unexpected_percent_nonmissing=share,
        )
        result["unexpected_percent"] = share
    else:
        result["unexpected_percent"] = total
    for key in EXAMPLE_LISTS:
        if key in result:
            result[key] = [value for part in parts for value in part.get(key) or ()][:examples]
    counts = _value_counts(result.get("partial_unexpected_list") or [], examples)
    if counts is None:  # GX leaves them out where the values do not hash or sort
        result.pop("partial_unexpected_counts", None)
    elif "partial_unexpected_counts" in result or any("partial_unexpected_counts" in part for part in parts):
        result["partial_unexpected_counts"] = counts
    return result


def _value_counts(values: list[Any], examples: int) -> list[dict[str, Any]] | None:
    hashable = [tuple(v.values()) if isinstance(v, dict) else v for v in values]
    try:
        common = sorted(Counter(hashable).most_common(examples), key=lambda x: (-x[1], x[0]))
    except TypeError:
        return None
    return [{"value": value, "count": count} for value, count in common]


def _map_success(result: dict[str, Any], mostly: float | None) -> bool:
    considered = result["element_count"] - result.get("missing_count", 0)
    if result["element_count"] == 0 or considered == 0:
        return True  # vacuously, as GX has it
    return (considered - result["unexpected_count"]) / considered >= (1.0 if mostly is None else mostly)
