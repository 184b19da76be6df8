"""`code`: a grading program run in the sandbox over the episode's evidence — its credit, the judge asked from outside
the sandbox, and every way it is not graded (no folder, no judge, a failing or runaway program); partial credit in the
task's completion."""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import replace
from pathlib import Path

import pytest
from pydantic import ValidationError

from coworkenv.checks import evaluate
from coworkenv.checks.kinds.rubric import NO_JUDGE
from coworkenv.grading.score import grade
from coworkenv.spec.task import TaskSpec
from tests.support.builders import check, ok, spec_dict
from tests.support.checks import Row, assert_pass_fail, cases, episode, recompute, registered, with_calls

READS = """
def grade(evidence, judge):
    reads = [c for c in evidence["calls"] if c["tool"] == "mail_search" and c["status"] == "ok"]
    return len(reads) >= 2, f"{len(reads)} search(es)"
"""

ROWS: list[Row] = [
    (
        "code",
        {"kind": "code", "program": READS},
        with_calls(ok(0, "mail_search"), ok(1, "mail_search")),
        with_calls(ok(0, "mail_search")),
    ),
    (
        "code-pass-at",
        {
            "kind": "code",
            "program": "def grade(e, judge):\n    return {'credit': len(e['answer']) / 10}",
            "pass_at": 0.4,
        },
        lambda: episode(answer="four"),
        lambda: episode(answer="one"),
    ),
]


class Scores:
    """A judge that scores: the answer's share of the words the criteria name."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, str]] = []

    def score(self, criteria: str, text: str) -> float:
        self.asked.append((criteria, text))
        words = criteria.split()
        return sum(w in text for w in words) / len(words)


@pytest.mark.parametrize(("fields", "passing", "failing"), cases(ROWS))
def test_evaluate(fields, passing, failing):
    assert_pass_fail(fields, passing, failing)


def test_registry_entry():
    # a program has no expectation to read off the oracle
    assert registered("code") == {"hooks": {"recompute"}, "guard": False, "answer": False, "evidence_for": set()}
    assert recompute({"kind": "code", "program": READS}, episode()) is None


def test_the_program_sees_the_evidence_and_earns_partial_credit():
    program = (
        "def grade(e, judge):\n    return 0.25 * len(e['calls']), 'calls: ' + ','.join(c['tool'] for c in e['calls'])"
    )
    outcome = evaluate(check(kind="code", program=program), episode(calls=(ok(0, "mail_search"),)))
    assert outcome == (False, "program credit 0.25: calls: mail_search") and outcome.credit == 0.25


def test_the_judge_answers_from_outside_and_the_program_runs_again():
    program = (
        "def grade(e, judge):\n"
        "    first = judge('renewal owner', e['answer'])\n"
        "    second = judge('signed contract', e['answer']) if first > 0 else 0\n"
        "    return (first + second) / 2\n"
    )
    judge = Scores()
    ev = replace(episode(answer="the renewal owner is Ana"), judge=judge)
    outcome = evaluate(check(kind="code", program=program), ev)
    assert outcome.credit == 0.5 and outcome[0] is False  # 1.0 and 0.0: asked over two runs, each question once
    assert judge.asked == [
        ("renewal owner", "the renewal owner is Ana"),
        ("signed contract", "the renewal owner is Ana"),
    ]
    assert evaluate(check(kind="code", program=program), episode(answer="x")) == (None, NO_JUDGE)


@pytest.mark.parametrize(
    ("program", "budget", "reason"),
    [
        ("def grade(e, judge):\n    return 2", 30, "grade returned 2: a credit in [0, 1] is expected"),
        ("def grade(e, judge):\n    return 1 / 0", 30, "ZeroDivisionError: division by zero (<code check>:2)"),
        ("x = 1", 30, "the program defines no grade(evidence, judge)"),
        ("def grade(e, judge):\n    while True:\n        pass", 1, "the program did not finish: over its"),
        ("import os\ndef grade(e, judge):\n    os._exit(3)", 30, "the program did not finish"),
    ],
)
def test_a_failing_program_is_not_graded(program, budget, reason):
    passed, why = evaluate(check(kind="code", program=program, budget_s=budget), episode())
    assert passed is None and why.startswith("not graded: ") and reason in why


def test_a_folder_comes_from_its_variable_read_only(monkeypatch):
    # the sandbox runs as a uid of its own when started as root: the folder must be readable by others
    tmp_path = Path(tempfile.mkdtemp(prefix="coworkenv-grader-"))
    (tmp_path / "expected.txt").write_text("42")
    (tmp_path / "expected.txt").chmod(0o444)
    program = (
        "from pathlib import Path\n"
        "def grade(e, judge):\n"
        "    folder = Path(e['folders']['COWORKENV_TEST_GRADER'])\n"
        "    try:\n"
        "        (folder / 'new.txt').write_text('x')\n"
        "        wrote = True\n"
        "    except OSError:\n"
        "        wrote = False\n"
        "    return (folder / 'expected.txt').read_text() == e['answer'] and not wrote\n"
    )
    code = check(kind="code", program=program, folders=["COWORKENV_TEST_GRADER"])
    monkeypatch.delenv("COWORKENV_TEST_GRADER", raising=False)
    assert evaluate(code, episode(answer="42")) == (
        None,
        "not graded: COWORKENV_TEST_GRADER names no folder here (the program reads it)",
    )
    monkeypatch.setenv("COWORKENV_TEST_GRADER", str(tmp_path))
    tmp_path.chmod(0o555)  # bwrap mounts it read-only; the rlimit runtime is held to its permissions
    try:
        assert evaluate(code, episode(answer="42"))[0] is True
        assert not (tmp_path / "new.txt").exists()
    finally:
        tmp_path.chmod(0o755)
        shutil.rmtree(tmp_path)


@pytest.mark.parametrize(
    "fields",
    [
        {"program": ""},
        {"program": READS, "folders": ["HOME"]},
        {"program": READS, "pass_at": 0},
        {"program": READS, "budget_s": 301},
    ],
)
def test_bad_fields_are_refused(fields):
    with pytest.raises(ValidationError):
        check(kind="code", **fields)


def test_partial_credit_counts_in_completion():
    half = {"id": "half", "kind": "code", "program": "def grade(e, judge):\n    return 0.5", "weight": 3.0}
    spec = TaskSpec.model_validate(spec_dict(checks=[half, {"id": "said", "kind": "answer_contains", "text": "done"}]))
    graded = grade(spec, episode(calls=(ok(0, "mail_search"),)))
    assert graded.completion == (3.0 * 0.5 + 1.0) / 4.0
    assert [(c.passed, c.credit) for c in graded.checks] == [(False, 0.5), (True, None)]
    assert "credit" not in graded.checks[1].model_dump()  # grades without partial credit keep their form


def test_a_sandboxed_validation_worker_runs_the_program_in_a_child_of_its_own():
    """A sandbox starts no further sandbox: inside a worker, the program runs in a child forked under its limits."""
    from coworkenv.sandbox.limits import Limits
    from coworkenv.sandbox.pool import run_jobs
    from coworkenv.validate.battery import validate_spec_json
    from coworkenv.validate.jobs import JOB_NAME
    from tests.support import ROOT
    from tests.support.sandbox import usable_runtime

    task = TaskSpec.model_validate_json((ROOT / "examples/tasks/13_retrieval_contract_renewal.json").read_text())
    assert "code" in {c.kind for c in task.checks}
    limits = Limits(wall_s=60, cpu_s=60, memory_mb=2048)
    (result,) = run_jobs(JOB_NAME, [task.to_json()], workers=1, runtime=usable_runtime("rlimit"), limits=limits)
    assert result.ok and result.output["valid"], result
    assert result.output == validate_spec_json(task.to_json())
