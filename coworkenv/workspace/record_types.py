"""Building blocks of service state: the strict record base and the value types records are made of.

A service's state model (in `workspace/services/<service>.py`) is built from these; the runtime workspace holds
exactly the JSON dump of those models, as plain dicts.
"""

from __future__ import annotations

import copy
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from coworkenv.frozen import EMPTY_DICT, EMPTY_LIST
from coworkenv.timeutil import parse_instant


def _iso_instant(value: str) -> str:
    parse_instant(value)  # raises ValueError with a clear message
    return value


Instant = Annotated[str, AfterValidator(_iso_instant)]
FiniteFloat = Annotated[float, Field(allow_inf_nan=False)]
Scalar = str | int | FiniteFloat | bool | None


class Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, populate_by_name=True)


class Identity(Record):
    """Who the agent acts as: the sender of its mail, the author of its posts and comments."""

    name: str = "Me"
    email: str = "me@acme.test"


def sparse(default: Any) -> Any:
    """A field added after workspaces were first published: left out of the JSON at its default, so that every
    older workspace keeps its exact JSON (and hashes). Whoever reads such a field takes absent as the default.
    An empty list or dict default is the shared immutable one (`coworkenv.frozen`): records are many."""
    if isinstance(default, list | dict) and not default:
        default = EMPTY_LIST if isinstance(default, list) else EMPTY_DICT
    return Field(default=default, exclude_if=lambda value: value == default)


def sparse_defaults(model: type[BaseModel]) -> dict[str, Any]:
    """The sparse fields of a record model with their defaults, by JSON name."""
    return {f.alias or name: f.default for name, f in model.model_fields.items() if f.exclude_if is not None}


def filled(record: dict[str, Any], defaults: dict[str, Any]) -> dict[str, Any]:
    """The record with its absent sparse fields at their defaults (a new dict; the record is left as it is)."""
    missing = defaults.keys() - record.keys()
    if not missing:
        return dict(record)
    # Only a default that can change in place (a list) is copied, and an empty one cheaply: this runs for every
    # record a check or a tool reads.
    out = {**defaults, **record}
    for key in missing:
        if isinstance(out[key], list | dict):
            out[key] = _fresh(out[key])
    return out


def detached(record: dict[str, Any]) -> dict[str, Any]:
    """A copy safe to hand out: results must not alias the workspace's own lists."""
    return {
        k: [dict(x) if isinstance(x, dict) else x for x in v] if isinstance(v, list) else v for k, v in record.items()
    }


def _fresh(value: list[Any] | dict[str, Any]) -> list[Any] | dict[str, Any]:
    if value:
        return copy.deepcopy(value)
    return [] if isinstance(value, list) else {}


def set_sparse(record: dict[str, Any], key: str, value: Any, default: Any) -> None:
    """Set a sparse field, dropping it at its default: one JSON for one state, whatever the path to it."""
    if value == default:
        record.pop(key, None)
    else:
        record[key] = value
