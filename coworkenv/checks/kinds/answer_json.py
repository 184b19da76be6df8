"""`answer_json`: the final answer holds a JSON value — the whole answer, a ```json fenced block, or the first {...} /
[...] that parses — which fits a JSON Schema and/or labels items as expected ("classify each email": the answer
`{"m1": "spam", "m2": "billing"}` or `[{"id": "m1", "label": "spam"}, ...]`)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any, Literal, Self

from jsonschema import Draft202012Validator, ValidationError, validators
from jsonschema.exceptions import SchemaError
from pydantic import ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError

from coworkenv.checks.answers import ScopedCheck, text_of
from coworkenv.checks.base import DROP, CheckKind, Evidence, Outcome, outcome, register_kind
from coworkenv.checks.regex import UNSUPPORTED, regex_problem, regex_search
from coworkenv.checks.text import phrase_pattern

MAX_CANDIDATES = 64
"""At most this many `{` / `[` positions are tried as the start of the JSON value: the look stays linear-ish."""

LEAK_CHARS = 40
"""An item's id and its expected label this close together in the instruction give the label away."""

_FENCED = re.compile(r"```(?:json)?[ \t]*\n(.*?)```", re.DOTALL | re.IGNORECASE)
_NOTHING = object()


def _re2_pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Any:
    if validator.is_type(instance, "string") and not regex_search(pattern, instance, case_sensitive=True):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


SchemaValidator = validators.extend(Draft202012Validator, {"pattern": _re2_pattern})
"""Draft 2020-12, with `pattern` run by RE2 (linear time) rather than Python's backtracking `re`."""


def _schema_problem(schema: Any) -> str | None:
    """Why `schema` is not usable (None: it is). Checked once per distinct JSON text, as the schema is stored (a
    tuple reads as the array it is written as): a family writes the same few schemas into thousands of tasks, and
    checking one against the meta-schema costs more than building the task."""
    try:
        text = json.dumps(schema, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError, RecursionError):  # not plain JSON data: checked as it is, uncached
        return _checked_schema_problem(schema)
    return _schema_problem_of_text(text)


@lru_cache(maxsize=256)
def _schema_problem_of_text(text: str) -> str | None:
    return _checked_schema_problem(json.loads(text))


def _checked_schema_problem(schema: Any) -> str | None:
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        return exc.message
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if "patternProperties" in node:
                return "patternProperties is not supported (its regexes would run on Python's backtracking engine)"
            pattern = node.get("pattern")
            if isinstance(pattern, str) and regex_problem(pattern) is not None:
                return f"pattern {pattern[:200]!r}: {regex_problem(pattern)}"
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return None


class AnswerJson(ScopedCheck):
    # `schema` names a method of pydantic's BaseModel: the field is `schema_`, written `schema` in JSON both ways.
    model_config = ConfigDict(**ScopedCheck.model_config, serialize_by_alias=True)

    kind: Literal["answer_json"]
    schema_: dict[str, Any] | None = Field(default=None, alias="schema")
    """A JSON Schema (draft 2020-12) the value must fit; `pattern` runs on RE2, `patternProperties` is refused."""
    labels: dict[str, str] | None = Field(default=None, min_length=1)
    """{item id: expected label}; labels compare case-insensitively, surrounding whitespace ignored."""
    id_field: str = Field(default="id", min_length=1)
    label_field: str = Field(default="label", min_length=1)
    min_share: float = Field(default=1.0, gt=0, le=1)
    """The share of the labelled items that must carry their expected label."""

    @model_validator(mode="after")
    def _something(self) -> Self:
        if self.schema_ is None and self.labels is None:
            raise ValueError("give schema or labels (or both)")
        problem = _schema_problem(self.schema_) if self.schema_ is not None else None
        if problem is not None:
            raise PydanticCustomError(
                UNSUPPORTED, "schema is not a usable JSON Schema: {problem}", {"problem": problem}
            )
        return self


def extract_json(text: str) -> Any:
    """The JSON value the text holds (see the module docstring), or `_NOTHING`."""
    for candidate in (text.strip(), *(m.group(1).strip() for m in _FENCED.finditer(text))):
        try:
            return json.loads(candidate)
        except ValueError:
            pass
    decoder = json.JSONDecoder()
    starts = (i for i, ch in enumerate(text) if ch in "{[")
    for _, i in zip(range(MAX_CANDIDATES), starts, strict=False):
        try:
            return decoder.raw_decode(text, i)[0]
        except ValueError:
            continue
    return _NOTHING


def item_labels(value: Any, id_field: str, label_field: str) -> dict[str, str | None]:
    """{id: label as given} from {id: label} or a list of {id_field, label_field}; an id given twice with different
    labels, or a label that is not text, maps to None (wrong whatever is expected)."""
    pairs: list[tuple[str, Any]] = []
    if isinstance(value, dict):
        pairs = [(str(k), v.get(label_field) if isinstance(v, dict) else v) for k, v in value.items()]
    elif isinstance(value, list):
        pairs = [(str(v[id_field]), v.get(label_field)) for v in value if isinstance(v, dict) and id_field in v]
    found: dict[str, str | None] = {}
    for key, label in pairs:
        label = label.strip().casefold() if isinstance(label, str) else None
        found[key] = label if key not in found or found[key] == label else None
    return found


def evaluate(check: AnswerJson, ev: Evidence) -> Outcome:
    value = extract_json(text_of(check, ev))
    if value is _NOTHING:
        return False, "no JSON value in the answer"
    if check.schema_ is not None:
        error = next(iter(SchemaValidator(check.schema_).iter_errors(value)), None)
        if error is not None:
            at = "/".join(str(p) for p in error.absolute_path) or "(root)"
            return False, f"the JSON does not fit the schema at {at}: {error.message[:200]}"
    if check.labels is None:
        return True, "the JSON fits the schema"
    given = item_labels(value, check.id_field, check.label_field)
    wrong = [k for k, want in check.labels.items() if given.get(k) != want.strip().casefold()]
    share = 1 - len(wrong) / len(check.labels)
    return outcome(
        share >= check.min_share - 1e-9,
        f"{share:.0%} of the items labelled as expected",
        f"{share:.0%} of the items labelled as expected (wanted {check.min_share:.0%}); wrong: {wrong[:10]}",
    )


def recompute(check: dict[str, Any], ev: Evidence, spec: Any) -> Any:
    """The labels the (trusted) oracle's answer gives the check's items; DROP when it holds no JSON or labels none
    of them, None when it does not fit the schema."""
    model = AnswerJson.model_validate(check)
    value = extract_json(text_of(model, ev))
    if value is _NOTHING:
        return DROP
    if model.schema_ is not None and next(iter(SchemaValidator(model.schema_).iter_errors(value)), None) is not None:
        return None
    if model.labels is None:
        return check
    given = item_labels(value, model.id_field, model.label_field)
    kept = {k: given[k] for k in model.labels if given.get(k)}
    return {**check, "labels": kept, "min_share": 1.0} if kept else DROP


def leaks(check: AnswerJson, instruction: str, workspace_text: Callable[[], str]) -> list[dict[str, Any]]:
    """An item's id and its expected label within `LEAK_CHARS` characters of each other, as whole words ("m1 is spam",
    `"m1": "spam"`): the instruction hands out that item's answer."""
    found = []
    for key, label in (check.labels or {}).items():
        if not key.strip() or not label.strip():
            continue
        ids = [m.start() for m in re.finditer(phrase_pattern(key), instruction, re.IGNORECASE)]
        for m in re.finditer(phrase_pattern(label), instruction, re.IGNORECASE) if ids else ():
            if any(abs(m.start() - i) <= LEAK_CHARS for i in ids):
                found.append(
                    {"source": "answer_json", "check": check.id, "value": f"{key}: {label}", "found": m.group()}
                )
                break
    return found


KIND = register_kind(
    CheckKind(
        name="answer_json",
        model=AnswerJson,
        evaluate=evaluate,
        recompute=recompute,
        leaks=leaks,
        answer=True,
    )
)
