"""The registry of check kinds: adding a kind means one module in `coworkenv/checks/kinds/` and one test module here,
`test_<kind>.py`, whose `ROWS` give a passing and a failing evidence for each of its variants."""

from __future__ import annotations

import copy
import importlib
from pathlib import Path
from types import ModuleType
from typing import get_args

import pytest
from pydantic import TypeAdapter

from coworkenv import spec
from coworkenv.checks import CHECK_KINDS, CHECK_MODELS, CHECKS, Check, evaluate
from coworkenv.checks.base import CheckKind, register_kind
from tests.support.builders import check
from tests.support.checks import episode, sent

KINDS = CHECKS.names()
CHECK = TypeAdapter(Check)


def kind_tests(name: str) -> ModuleType:
    return importlib.import_module(f"{__package__}.test_{name}")


def test_every_kind_has_its_test_module():
    here = Path(__file__).parent
    assert [name for name in KINDS if not (here / f"test_{name}.py").is_file()] == []


@pytest.mark.parametrize("name", KINDS)
def test_each_kind_module_evaluates_rows_and_pins_its_registry_entry(name):
    module = kind_tests(name)
    assert module.ROWS and {fields["kind"] for _, fields, _, _ in module.ROWS} == {name}
    assert callable(module.test_evaluate) and callable(module.test_registry_entry)


@pytest.mark.parametrize("name", KINDS)
def test_each_model_declares_its_kind(name):
    assert get_args(CHECKS.get(name).model.model_fields["kind"].annotation) == (name,)


def test_check_kinds_are_the_registry():
    assert CHECK_KINDS == tuple(KINDS) == spec.CHECK_KINDS
    assert CHECK_MODELS == tuple(CHECKS.get(name).model for name in KINDS)


@pytest.mark.parametrize("name", KINDS)
def test_the_check_union_parses_every_kind(name):
    for _, fields, _, _ in kind_tests(name).ROWS:
        parsed = CHECK.validate_python({"id": "c", **fields})
        assert type(parsed) is CHECKS.get(name).model
        assert CHECK.validate_json(parsed.model_dump_json()) == parsed


def test_register_kind_refuses_a_mismatched_model_or_a_second_registration():
    entry = CHECKS.get("file_exists")
    with pytest.raises(ValueError, match="its model declares kind 'file_exists'"):
        register_kind(CheckKind(name="file_there", model=entry.model, evaluate=entry.evaluate))
    with pytest.raises(ValueError, match="registered twice"):
        register_kind(entry)
    assert CHECKS.names() == KINDS


def test_no_check_mutates_the_evidence():
    ev = episode(sent(to=["x@acme.test"]))
    before = (copy.deepcopy(ev.initial_state), copy.deepcopy(ev.final_state))
    for name in KINDS:
        for _, fields, _, _ in kind_tests(name).ROWS:
            evaluate(check(**fields), ev)
    assert (ev.initial_state, ev.final_state) == before
