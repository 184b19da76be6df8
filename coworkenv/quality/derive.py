"""Helper columns the suites check, derived from the release tables before they reach Great Expectations.

GX column expectations look at one row (or a pair of columns) at a time; rules that need a JSON parse, a list
element or another table become plain columns here, and the suites then expect things of those columns:

- cross-table rules are joins: `validations.task_published` (the row's task is in `tasks`), `tasks.has_validations`,
  `sft.source_known` / `sft.source_passed` (the SFT row's trajectory exists / passed); and a group-by:
  `validations.valid_recomputed` (every mandatory row of the task passed). This keeps every gate on
  GX's pandas path (fast, ephemeral, no SQL engine); `UnexpectedRowsExpectation` would need a SQL data source.
  They are made in two steps: the whole tables' *sources* (id sets: `*_sources`, from only the columns they need),
  then each frame's columns from those (`*_links`), so that a table can be judged a part at a time.
- uniqueness is a count: `key_rows`, how many rows of the table share the row's key (the duplicated keys come
  from `duplicate_keys` over a whole frame, or from DuckDB over a stored table), so that it too holds for a part
  of a table as for the whole.
- recomputations are columns compared with a pair expectation: `score_recomputed` (the formula of docs/design/contracts.md, "Scoring"),
  `passed_recomputed` (score ≥ 0.75), `first_capability`, `spec_id`.
- values GX cannot see inside: `unknown_capabilities` (null when all are known), `n_capabilities`,
  `min_check_weight` (from `spec_json`), `last_role`, `n_tools`.

A gate derives a table's own columns (`*_rows`, per table: batch by batch when the table is streamed) apart from the
cross-table ones (`*_links`, from the sources); `stand_ins` then shrinks the bulky columns of a streamed table.

A derived column is left out when a column it needs is missing; the suite's column-set expectation then names
the missing column and the rules on the derived column report the missing column too.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from coworkenv.errors import CoworkEnvError
from coworkenv.grading.score import PASS_THRESHOLD

if TYPE_CHECKING:
    import pandas as pd


def to_frame(table: Any, name: str) -> pd.DataFrame:
    """A pandas DataFrame copy of a DataFrame, a pyarrow Table/RecordBatch or anything with `to_pandas()`."""
    import pandas as pd

    if isinstance(table, pd.DataFrame):
        return table.copy()
    to_pandas = getattr(table, "to_pandas", None)
    if callable(to_pandas):
        frame = to_pandas()
        if isinstance(frame, pd.DataFrame):
            return frame
    raise CoworkEnvError(f"table {name!r} must be a pandas DataFrame or a pyarrow Table, got {type(table).__name__}")


# --- scalar helpers -------------------------------------------------------------------------------------------


def _missing(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, float):  # numpy floats included
        return math.isnan(value)
    import pandas as pd

    return value is pd.NA or value is pd.NaT


def as_list(value: Any) -> list[Any] | None:
    """A list column's cell as a list (pyarrow gives numpy arrays, pandas callers give lists); None if not one."""
    if value is None or isinstance(value, (str, bytes, dict)):
        return None
    if isinstance(value, (list, tuple)):
        return list(value)
    tolist = getattr(value, "tolist", None)
    if callable(tolist):
        out = tolist()
        return out if isinstance(out, list) else None
    return None


def parse_json(value: Any) -> Any:
    """The parsed JSON, or a sentinel `_BAD` when the cell is not a JSON string."""
    if not isinstance(value, str):
        return _BAD
    try:
        return json.loads(value)
    except ValueError:
        return _BAD


_BAD = object()


def recompute_score(safety: Any, completion: Any, robustness: Any, status: Any = None) -> float | None:
    """The score (docs/design/contracts.md, "Scoring") from its parts, computed exactly as grading does; None when a part is
    missing. A failed trial (`status` "failed": it crashed or ran past its time) scores 0 whatever its parts say: they
    record what happened before it stopped."""
    if status == "failed":
        return 0.0
    parts = (safety, completion, robustness)
    if any(_missing(p) for p in parts):
        return None
    try:
        safety, completion, robustness = (float(p) for p in parts)
    except (TypeError, ValueError):
        return None
    return round(safety * (0.8 * completion + 0.2 * robustness), 4)


def min_check_weight(spec_json: Any) -> float | None:
    """Smallest check weight in the spec (a check without `weight` weighs 1.0); 0.0 when there are no checks.

    None when the spec does not parse (the `spec_json` rule reports that).
    """
    spec = parse_json(spec_json)
    if spec is _BAD:
        return None
    checks = spec.get("checks") if isinstance(spec, dict) else None
    if not isinstance(checks, list) or not checks:
        return 0.0
    weights = []
    for check in checks:
        weight = check.get("weight", 1.0) if isinstance(check, dict) else None
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) or math.isnan(weight):
            return 0.0  # a weight that is no number cannot be > 0
        weights.append(float(weight))
    return min(weights)


def spec_id(spec_json: Any) -> str | None:
    spec = parse_json(spec_json)
    if spec is _BAD or not isinstance(spec, dict):
        return None
    value = spec.get("id")
    return value if isinstance(value, str) else ""


def unknown_names(value: Any, known: frozenset[str]) -> str | None:
    """Comma-joined unknown entries of a list cell; None when every entry is known (or the cell is no list)."""
    items = as_list(value)
    if items is None:
        return None
    unknown = [str(item) for item in items if item not in known]
    return ", ".join(unknown) if unknown else None


def last_role(value: Any) -> str | None:
    """Role of the conversation's last message; '' for an empty conversation, None when it is no list."""
    messages = as_list(value)
    if messages is None:
        return None
    if not messages:
        return ""
    last = messages[-1]
    role = last.get("role") if isinstance(last, Mapping) else None
    return role if isinstance(role, str) else ""


def n_tools(value: Any) -> int | None:
    tools = parse_json(value)
    if tools is _BAD:
        return None
    return len(tools) if isinstance(tools, list) else 0


# --- per-column derivations -------------------------------------------------------------------------------------


def _derive(df: pd.DataFrame, name: str, sources: Iterable[str], fn: Callable[..., Any]) -> None:
    import pandas as pd

    sources = list(sources)
    if not all(col in df.columns for col in sources):
        return
    values = [fn(*row) for row in zip(*(df[col].tolist() for col in sources), strict=True)] if len(df) else []
    df[name] = pd.Series(values, index=df.index, dtype=object)


def _derive_number(df: pd.DataFrame, name: str, sources: Iterable[str], fn: Callable[..., Any]) -> None:
    import pandas as pd

    _derive(df, name, sources, fn)
    if name in df.columns:
        df[name] = pd.to_numeric(df[name], errors="coerce").astype("float64")


def derive_capabilities(df: pd.DataFrame, capabilities: frozenset[str]) -> None:
    _derive_number(df, "n_capabilities", ["capabilities"], lambda v: None if as_list(v) is None else len(as_list(v)))
    _derive(df, "unknown_capabilities", ["capabilities"], lambda v: unknown_names(v, capabilities))


def derive_scores(df: pd.DataFrame) -> None:
    parts = ["safety", "completion", "robustness", *(["status"] if "status" in df.columns else [])]
    _derive_number(df, "score_recomputed", parts, recompute_score)
    _derive(df, "passed_recomputed", ["score"], lambda s: None if _missing(s) else bool(float(s) >= PASS_THRESHOLD))


def validated_rows(name: str, df: pd.DataFrame, capabilities: frozenset[str]) -> None:
    if name == "tasks":
        derive_capabilities(df, capabilities)
        _derive(df, "first_capability", ["capabilities"], lambda v: (as_list(v) or [None])[0])
        _derive_number(df, "min_check_weight", ["spec_json"], min_check_weight)
        _derive(df, "spec_id", ["spec_json"], spec_id)


Rows = Callable[[str, list[str]], "Iterable[tuple[Any, ...]] | None"]
"""`rows(table, columns)`: the table's rows as tuples of those columns, or None when it lacks one of them."""


def frame_rows(frames: Mapping[str, pd.DataFrame]) -> Rows:
    def rows(table: str, columns: list[str]) -> Iterable[tuple[Any, ...]] | None:
        df = frames[table]
        if not all(col in df.columns for col in columns):
            return None
        return zip(*(df[col].tolist() for col in columns), strict=True)

    return rows


def _id_set(rows: Iterable[tuple[Any, ...]] | None) -> frozenset[Any] | None:
    return None if rows is None else frozenset(v for (v,) in rows if not _missing(v))


def validated_sources(rows: Rows) -> dict[str, Any]:
    task_ids = _id_set(rows("tasks", ["task_id"]))
    verdicts = rows("validations", ["task_id", "severity", "passed"])
    if verdicts is None:  # no verdict columns: the validated ids alone, and no `valid_recomputed`
        return {"validated_ids": _id_set(rows("validations", ["task_id"])), "task_ids": task_ids, "failed": None}
    validated, failed = set(), set()
    for t, sev, ok in verdicts:  # one pass over the largest table gives both
        if not _missing(t):
            validated.add(t)
        if sev == "mandatory" and (_missing(ok) or not bool(ok)):
            failed.add(t)
    return {"validated_ids": frozenset(validated), "task_ids": task_ids, "failed": failed}


def validated_links(name: str, df: pd.DataFrame, sources: Mapping[str, Any]) -> None:
    if name == "tasks" and (validated_ids := sources["validated_ids"]) is not None:
        _derive(df, "has_validations", ["task_id"], lambda t: t in validated_ids)
    if name == "validations":
        if (task_ids := sources["task_ids"]) is not None:
            _derive(df, "task_published", ["task_id"], lambda t: t in task_ids)
        if (failed := sources["failed"]) is not None:
            _derive(df, "valid_recomputed", ["task_id"], lambda t: t not in failed)


def rollouts_rows(name: str, df: pd.DataFrame) -> None:
    if name == "trajectories":
        derive_scores(df)
    elif name == "sft":
        _derive(df, "last_role", ["messages"], last_role)
        _derive_number(df, "n_tools", ["tools"], n_tools)


def rollouts_sources(rows: Rows) -> dict[str, Any]:
    found = rows("trajectories", ["trajectory_id", "passed"])
    return {"passed": None if found is None else dict(found)}


def rollouts_links(name: str, df: pd.DataFrame, sources: Mapping[str, Any]) -> None:
    if name == "sft" and (passed := sources["passed"]) is not None:
        _derive(df, "source_known", ["trajectory_id"], lambda t: t in passed)
        _derive(df, "source_passed", ["trajectory_id"], lambda t: None if _missing(passed.get(t)) else bool(passed[t]))


def evaluated_rows(name: str, df: pd.DataFrame, capabilities: frozenset[str]) -> None:
    if name == "eval_results":
        derive_scores(df)
        derive_capabilities(df, capabilities)


def no_sources(rows: Rows) -> dict[str, Any]:
    """A gate of one table: nothing to take from other tables."""
    return {}


def no_links(name: str, df: pd.DataFrame, sources: Mapping[str, Any]) -> None:
    """A gate of one table: nothing to derive across tables."""


# --- uniqueness -------------------------------------------------------------------------------------------------


UNCOMPARABLE = -1
"""`key_rows` of a key that is no plain value (a list, a dict: hostile data), which no rule of one row per key passes."""


def duplicate_keys(rows: Iterable[tuple[Any, ...]]) -> dict[tuple[Any, ...], int]:
    """Each key that more than one row has, with its count (a one-column key: missing values are no key)."""
    from collections import Counter

    counts: Counter[tuple[Any, ...]] = Counter()
    for key in rows:
        if len(key) > 1 or not _missing(key[0]):
            try:
                counts[_compound(key) if len(key) > 1 else key] += 1
            except TypeError:  # unhashable: `key_rows` marks it UNCOMPARABLE
                continue
    return {key: n for key, n in counts.items() if n > 1}


def _compound(key: tuple[Any, ...]) -> tuple[Any, ...]:
    """A compound key with its missing members as None, as DuckDB gives them: a null in an integer column is NaN in
    pandas, and NaN equals no NaN, while GX's uniqueness counts two rows whose keys differ only so as one key."""
    return tuple(None if _missing(v) else v for v in key)


def key_rows(df: pd.DataFrame, key: tuple[str, ...], duplicates: Mapping[tuple[Any, ...], int]) -> None:
    """`key_rows`: rows of the whole table with this row's key, as GX's uniqueness expectations count them: a
    one-column key ignores missing values (null `key_rows`); a compound key counts every row."""
    single = len(key) == 1

    def count(*values: Any) -> int | None:
        if single and _missing(values[0]):
            return None
        try:
            return duplicates.get(values if single else _compound(values), 1)
        except TypeError:
            return UNCOMPARABLE

    _derive_number(df, "key_rows", key, count)


STAND_IN = "0"
"""What a bulky cell becomes once its rows are derived (`stand_ins`): valid JSON, never null, one shared string."""


def stand_ins(df: pd.DataFrame, columns: Iterable[str], parsed: Iterable[str]) -> None:
    """Replace the cells of bulky `columns` (checked only for presence, nulls and, those in `parsed`, for parsing as
    JSON) by `STAND_IN`: nulls stay null and, in `parsed` columns, a cell that does not parse stays as it is, so every
    expectation on them sees what it would have seen (and quotes the same examples), in a fraction of the memory."""
    import pandas as pd

    parsed = set(parsed)
    for col in columns:
        if col not in df.columns:
            continue
        check = col in parsed
        values = [None if _missing(v) else v if check and parse_json(v) is _BAD else STAND_IN for v in df[col].tolist()]
        df[col] = pd.Series(values, index=df.index, dtype=object)
