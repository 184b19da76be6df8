"""The shared empty defaults (`coworkenv/frozen.py`) behave as `[]` and `{}` do, and cannot be changed."""

from __future__ import annotations

import copy
import json
import pickle

import pytest
from pydantic import BaseModel, ConfigDict

from coworkenv.frozen import EMPTY_DICT, EMPTY_LIST
from coworkenv.spec import TaskSpec
from tests.support.builders import t1


class Model(BaseModel):
    model_config = ConfigDict(frozen=True, strict=True)

    items: list[str] = EMPTY_LIST
    table: dict[str, int] = EMPTY_DICT


def test_shared_defaults_validate_dump_and_describe_like_literals() -> None:
    made = Model()
    assert made.items is Model().items  # shared, not copied
    assert made.items == [] and made.table == {}
    assert made.model_dump() == {"items": [], "table": {}}
    assert made.model_dump_json() == '{"items":[],"table":{}}'
    assert json.dumps(made.items) == "[]"
    props = Model.model_json_schema()["properties"]
    assert props["items"]["default"] == [] and props["table"]["default"] == {}
    assert copy.deepcopy(made) == made and pickle.loads(pickle.dumps(made)) == made
    assert Model(items=["a"]).items == ["a"]


@pytest.mark.parametrize(
    "change",
    [
        lambda v: v.append(1),
        lambda v: v.extend([1]),
        lambda v: v.insert(0, 1),
        lambda v: v.__setitem__(slice(0, 0), [1]),
        lambda v: v.__iadd__([1]),
        lambda v: v.sort(),
        lambda v: v.clear(),
    ],
)
def test_the_shared_list_refuses_every_change(change) -> None:
    with pytest.raises(TypeError, match="cannot be changed"):
        change(EMPTY_LIST)
    assert EMPTY_LIST == []


@pytest.mark.parametrize(
    "change",
    [
        lambda v: v.__setitem__("a", 1),
        lambda v: v.update(a=1),
        lambda v: v.setdefault("a", 1),
        lambda v: v.__ior__({"a": 1}),
    ],
)
def test_the_shared_dict_refuses_every_change(change) -> None:
    with pytest.raises(TypeError, match="cannot be changed"):
        change(EMPTY_DICT)
    assert EMPTY_DICT == {}


def test_a_spec_without_optional_lists_shares_them_and_round_trips() -> None:
    spec = t1()
    assert spec.checks[0].requires is EMPTY_LIST
    assert TaskSpec.model_validate_json(spec.to_json()) == spec
    assert "requires" not in json.loads(spec.to_json())["checks"][0]
