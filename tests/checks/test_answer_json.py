"""`answer_json`: where the JSON value is found, the schema, per-item labels with `min_share`, and its hooks."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from coworkenv.checks import DROP
from coworkenv.checks.kinds.answer_json import extract_json, item_labels
from tests.support.builders import check
from tests.support.checks import (
    Row,
    assert_pass_fail,
    cases,
    episode,
    holds,
    leaked,
    recompute,
    registered,
    with_answer,
)

LABELS = {"m1": "spam", "m2": "billing", "m3": "personal"}
RIGHT = '{"m1": "spam", "m2": "Billing", "m3": "personal"}'
SCHEMA = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["id", "label"],
        "properties": {"label": {"type": "string", "pattern": "^[a-z]+$"}},
    },
}

ROWS: list[Row] = [
    (
        "answer_json-labels",
        {"kind": "answer_json", "labels": LABELS},
        with_answer(RIGHT),
        with_answer('{"m1": "spam", "m2": "spam", "m3": "personal"}'),
    ),
    (
        "answer_json-list",
        {"kind": "answer_json", "labels": LABELS},
        with_answer(
            'Here:\n```json\n[{"id": "m1", "label": "spam"}, {"id": "m2", "label": "billing"}, {"id": "m3", "label": "personal"}]\n```'
        ),
        with_answer('[{"id": "m1", "label": "spam"}]'),
    ),
    (
        "answer_json-fields",
        {"kind": "answer_json", "labels": {"1": "high"}, "id_field": "ticket", "label_field": "priority"},
        with_answer('Result: [{"ticket": 1, "priority": "HIGH"}] as asked.'),
        with_answer('[{"id": 1, "label": "high"}]'),
    ),
    (
        "answer_json-min_share",
        {"kind": "answer_json", "labels": LABELS, "min_share": 0.6},
        with_answer('{"m1": "spam", "m2": "billing", "m3": "spam"}'),
        with_answer('{"m1": "spam", "m2": "spam", "m3": "spam"}'),
    ),
    (
        "answer_json-schema",
        {"kind": "answer_json", "schema": SCHEMA},
        with_answer('[{"id": "m1", "label": "spam"}]'),
        with_answer('[{"id": "m1", "label": "Spam!"}]'),
    ),
    (
        "answer_json-scope-messages",
        {"kind": "answer_json", "labels": {"m1": "spam"}, "scope": "messages"},
        with_answer("Done.", says=('{"m1": "spam"}',)),
        with_answer("Done.", says=("m1 is spam",)),
    ),
]


def labelled(labels: dict, **fields) -> dict:
    return {"kind": "answer_json", "labels": labels, **fields}


@pytest.mark.parametrize(("fields", "passing", "failing"), cases(ROWS))
def test_evaluate(fields, passing, failing):
    assert_pass_fail(fields, passing, failing)


def test_registry_entry():
    assert registered("answer_json") == {
        "hooks": {"recompute", "leaks"},
        "guard": False,
        "answer": True,
        "evidence_for": set(),
    }


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ('  {"a": 1} ', {"a": 1}),
        ('Sure.\n```json\n{"a": 1}\n```\nAnything else?', {"a": 1}),
        ("I think {not json} but [1, 2] is.", [1, 2]),
        ("no JSON here", None),
        ('{"a": 1', None),
    ],
)
def test_extract_json(text, value):
    found = extract_json(text)
    assert (None if found is not None and found.__class__ is object else found) == value


def test_an_id_labelled_twice_differently_is_wrong_whatever_is_expected():
    stuffed = [{"id": "m1", "label": "spam"}, {"id": "m1", "label": "billing"}, {"id": "m2", "label": "billing"}]
    assert item_labels(stuffed, "id", "label") == {"m1": None, "m2": "billing"}
    assert not holds(labelled({"m1": "spam"}), episode(answer=str(stuffed).replace("'", '"')))


@pytest.mark.parametrize(
    ("fields", "error"),
    [
        ({}, "give schema or labels"),
        ({"schema": {"type": "nonsense"}}, "not a usable JSON Schema"),
        ({"schema": {"type": "string", "pattern": "(a)\\1"}}, "not a usable JSON Schema"),
        ({"schema": {"patternProperties": {"^a": {}}}}, "patternProperties is not supported"),
        ({"labels": {"m1": "spam"}, "min_share": 0}, "greater than 0"),
    ],
)
def test_bad_checks_are_refused(fields, error):
    with pytest.raises(ValidationError, match=error):
        check(kind="answer_json", **fields)


def test_a_schema_is_judged_the_same_every_time_it_is_seen():
    """Schemas are checked once per distinct JSON text: a second task with the same bad schema is refused too, with
    the same words, and keys in another order are the same schema."""
    bad = {"type": "string", "pattern": "(a)\\1"}
    errors = []
    for _ in range(2):
        with pytest.raises(ValidationError) as caught:
            check(kind="answer_json", schema=dict(bad))
        errors.append(caught.value.errors()[0]["msg"])
    assert errors[0] == errors[1] and "not a usable JSON Schema" in errors[0]
    assert check(kind="answer_json", schema={"type": "object", "required": ["a"]})
    assert check(kind="answer_json", schema={"required": ["a"], "type": "object"})


def test_schema_patterns_run_on_re2():
    slow_on_backtracking = {"type": "string", "pattern": "^(a+)+$"}
    assert not holds({"kind": "answer_json", "schema": slow_on_backtracking}, episode(answer='"' + "a" * 40 + '!"'))


def test_recompute_takes_the_oracles_labels():
    ev = episode(answer='{"m1": "Spam", "m2": "billing"}')
    fixed = recompute(labelled({"m1": "billing", "m2": "billing", "m9": "x"}, min_share=0.5), ev)
    assert fixed == {"id": "chk-answer_json", **labelled({"m1": "spam", "m2": "billing"}, min_share=1.0)} and holds(
        fixed, ev
    )
    assert recompute(labelled({"m9": "x"}), ev) is DROP
    assert recompute(labelled({"m1": "x"}), episode(answer="no JSON")) is DROP
    assert recompute({"kind": "answer_json", "labels": {"m1": "x"}, "schema": {"type": "array"}}, ev) is None


@pytest.mark.parametrize(
    ("instruction", "found"),
    [
        ("Classify m1 (it is spam) and the rest.", ["spam"]),
        ('Answer like {"m1": "spam"}.', ["spam"]),
        ("Label each email as spam, billing or personal.", []),  # the label set is the task's vocabulary
        ("Label m1, m2 and m3. The allowed labels, in this order of preference, are: spam, billing.", []),
    ],
)
def test_leaks(instruction, found):
    assert leaked(labelled({"m1": "spam"}), instruction) == found
