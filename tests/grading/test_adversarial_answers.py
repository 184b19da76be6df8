"""Answers that are wrong but look right must not pass: wrong labels, the wrong entity, the right one negated, every
candidate listed, the right number next to the wrong label. Each task here passes the consistency gate and the
battery; each answer in `tests/fixtures/adversarial_answers.json` is played after the oracle's own tool steps (so
only the answer differs) and must score below the pass threshold, while the paraphrases listed as right must pass.
Grow the corpus by adding answers to the JSON file."""

from __future__ import annotations

import copy
import json

import pytest

from coworkenv.grading.consistency import consistency_gate
from coworkenv.grading.play import play
from coworkenv.grading.score import PASS_THRESHOLD
from coworkenv.spec import TaskSpec
from coworkenv.spec.task import AnswerStep, ToolStep
from coworkenv.validate.battery import validate_spec
from tests.support import FIXTURES
from tests.support.builders import make_spec, rich_workspace

CORPUS = json.loads((FIXTURES / "adversarial_answers.json").read_text(encoding="utf-8"))


def _task(
    name: str, instruction: str, tools: list[str], checks: list[dict], steps: list[dict], answer: str, **extra
) -> TaskSpec:
    return make_spec(
        id=f"adversarial-{name}",
        family="adversarial",
        instruction=instruction,
        tools=tools,
        checks=checks,
        solution=[*steps, {"answer": answer}],
        prohibited=[],
        **extra,
    )


def classify() -> TaskSpec:
    return _task(
        "classify",
        "Classify each email in my inbox as billing, personal or alert, and answer with a JSON object mapping each message id to its label.",
        ["mail_search", "mail_read"],
        [
            {
                "id": "labels",
                "kind": "answer_json",
                "weight": 3,
                "labels": {"m1": "billing", "m2": "personal", "m3": "alert"},
            },
            {"id": "searched", "kind": "tool_called", "tool": "mail_search"},
        ],
        [
            {"tool": "mail_search", "args": {"folder": "inbox"}},
            *({"tool": "mail_read", "args": {"id": m}} for m in ("m1", "m2", "m3")),
        ],
        '{"m1": "billing", "m2": "personal", "m3": "alert"}',
    )


def city() -> TaskSpec:
    workspace = rich_workspace()
    workspace["docs"]["docs"].append(
        {
            "id": "d2",
            "title": "Offsite options",
            "body": (
                "Paris: 38,000 EUR, two hours by train.\nLyon: 52,000 EUR, two hours by train.\nNice: 35,000 EUR, no train connection."
            ),
        }
    )
    return _task(
        "city",
        "Read the offsite options doc and tell me which city we should pick: the budget is 40,000 EUR and everyone must be able to come by train.",
        ["docs_search", "docs_read"],
        [
            {
                "id": "pick",
                "kind": "answer_contains",
                "weight": 2,
                "text": "Paris",
                "whole_word": True,
                "not_negated": True,
            },
            {"id": "not-the-others", "kind": "answer_none_of", "weight": 2, "phrases": ["Lyon", "Nice"]},
            {"id": "read", "kind": "tool_called", "tool": "docs_read", "args": {"id": "d2"}},
        ],
        [{"tool": "docs_search", "args": {"query": "offsite"}}, {"tool": "docs_read", "args": {"id": "d2"}}],
        "Paris: it is within budget and reachable by train.",
        workspace=workspace,
    )


def total() -> TaskSpec:
    workspace = rich_workspace()
    workspace["sheets"]["budget"]["rows"].append(["chairs", 750])
    return _task(
        "total",
        "What is the total of the amounts in the budget sheet?",
        ["sheets_list", "sheets_read"],
        [
            {"id": "total", "kind": "answer_number", "weight": 3, "value": 6250, "label": "total"},
            {"id": "read", "kind": "tool_called", "tool": "sheets_read", "args": {"sheet": "budget"}},
        ],
        [{"tool": "sheets_read", "args": {"sheet": "budget"}}],
        "Total: 6,250 (laptops 4,000, desks 1,500, chairs 750).",
        capabilities=["retrieval", "data_analysis"],
    )


def summary() -> TaskSpec:
    return _task(
        "summary",
        "Summarize the open tickets for me in two or three sentences, giving each one's id.",
        ["tickets_search", "tickets_get"],
        [
            {"id": "long-enough", "kind": "answer_length", "min_words": 12, "max_chars": 400},
            {"id": "names-the-ticket", "kind": "answer_regex", "pattern": r"\bt1\b"},
            {"id": "says-what-it-is", "kind": "answer_regex", "pattern": r"\bVPN\b"},
            {"id": "only-open-ones", "kind": "answer_none_of", "weight": 2, "phrases": ["t2"]},
            {"id": "searched", "kind": "tool_called", "tool": "tickets_search"},
        ],
        [{"tool": "tickets_search", "args": {"status": "open"}}, {"tool": "tickets_get", "args": {"id": "t1"}}],
        "One ticket is open: t1, VPN down - users cannot connect to the VPN, and nobody is assigned to it yet.",
    )


TASKS = {"classify": classify, "city": city, "total": total, "summary": summary}


def answered(spec: TaskSpec, answer: str) -> list:
    """The oracle's tool steps, then `answer`."""
    return [*(copy.deepcopy(s) for s in spec.solution if isinstance(s, ToolStep)), AnswerStep(answer=answer)]


def test_the_corpus_covers_every_task_with_right_and_wrong_answers():
    assert set(CORPUS) == set(TASKS)
    assert all(entry["right"] and entry["wrong"] for entry in CORPUS.values())


@pytest.mark.parametrize("name", TASKS)
def test_each_task_passes_the_gate_and_the_battery(name):
    spec = TASKS[name]()
    gate = consistency_gate(spec)
    assert gate.passed, gate.failures
    verdict = validate_spec(spec)
    assert verdict.valid, [(r.code, r.message) for r in verdict.results if not r.passed]


@pytest.mark.parametrize(
    ("name", "answer"),
    [pytest.param(name, a, id=f"{name}-{i}") for name, e in CORPUS.items() for i, a in enumerate(e["right"])],
)
def test_right_answers_in_other_words_pass(name, answer):
    run = play(TASKS[name](), answered(TASKS[name](), answer))
    assert run.grade.passed, [(c.id, c.reason) for c in run.grade.checks if not c.passed]


@pytest.mark.parametrize(
    ("name", "answer"),
    [pytest.param(name, w["answer"], id=f"{name}-{w['why']}") for name, e in CORPUS.items() for w in e["wrong"]],
)
def test_adversarial_answers_do_not_pass(name, answer):
    spec = TASKS[name]()
    run = play(spec, answered(spec, answer))
    assert run.grade.robustness == 1.0 and run.grade.safety == 1.0  # only the answer is wrong
    assert run.grade.score < PASS_THRESHOLD, [(c.id, c.passed, c.reason) for c in run.grade.checks]
