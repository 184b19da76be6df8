"""Hostile specs (`tests/support/hostile.py`: regex bombs, RE2-less constructs, huge strings, deep nesting, many checks,
huge counts, lone surrogates, oversized files and texts, a slow oracle) through both sandbox runtimes and through the
in-process commands: each gets a clean verdict or a one-line error, within its budget, and the good tasks of the same
batch get exactly the verdicts they get alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from coworkenv.validate.batch import validate_tasks
from coworkenv.validate.battery import validate_spec_json
from tests.support import EXAMPLES, ROOT
from tests.support.hostile import BASE, Hostile, hostile_specs, slow_oracle
from tests.support.sandbox import RUNTIME_NAMES, usable_runtime

CLI = Path(sys.executable).parent / "coworkenv"
ENV = {k: v for k, v in os.environ.items() if k != "COWORKENV_DATA_ROOT"} | {"COLUMNS": "200"}
HOSTILE = hostile_specs()
BUDGET_S = 2.0
"""The batch's per-task budget: ten times what a good task needs, a tenth of what the slow oracle needs."""


def cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(CLI), *map(str, args)], capture_output=True, text=True, env=ENV, cwd=ROOT, timeout=600, check=False
    )


def assert_clean(verdict: dict, hostile: Hostile) -> None:
    """A verdict, never a crash: no exception inside the battery; refused by the schema with the expected type."""
    assert not verdict["valid"] or hostile.refused_as is None, hostile.name
    for row in verdict["results"]:
        assert "exception" not in row["details"] and "internal_error" not in row["details"], (hostile.name, row)
    schema = [r for r in verdict["results"] if r["code"] == "schema"]
    if hostile.refused_as is None:
        assert schema and schema[0]["passed"], (hostile.name, verdict["results"][:1])
    else:
        assert schema and not schema[0]["passed"], hostile.name
        assert hostile.refused_as in [e["type"] for e in schema[0]["details"]["errors"]], (
            hostile.name,
            schema[0]["details"],
        )


def test_there_are_enough_hostile_specs():
    assert len(HOSTILE) + 1 >= 22 and len({h.name for h in HOSTILE}) == len(HOSTILE)


@pytest.mark.parametrize("hostile", HOSTILE, ids=[h.name for h in HOSTILE])
def test_in_process_battery_gives_a_clean_verdict(hostile: Hostile):
    [verdict] = validate_tasks([hostile.text], runtime="none")
    assert_clean(verdict.model_dump(mode="json"), hostile)


def _batch() -> tuple[list[str], list[Hostile | None]]:
    """Good example tasks with the hostile ones (the slow oracle among them) dealt in between: (texts, what each is)."""
    good: list[tuple[str, Hostile | None]] = [
        (" ".join(p.read_text(encoding="utf-8").splitlines()), None) for p in sorted(EXAMPLES.glob("*.json"))
    ]
    hostile: list[tuple[str, Hostile | None]] = [(h.text, h) for h in [*HOSTILE, slow_oracle()]]
    mixed = [
        pair for i in range(max(len(good), len(hostile))) for column in (good, hostile) for pair in column[i : i + 1]
    ]
    return [text for text, _ in mixed], [kind for _, kind in mixed]


@pytest.mark.slow
@pytest.mark.parametrize("runtime", RUNTIME_NAMES)
def test_a_batch_with_hostile_specs_through_the_validate_command(runtime: str, tmp_path: Path):
    """`coworkenv generate --tasks` then `coworkenv validate`, under each sandbox runtime, with a per-task budget of
    BUDGET_S seconds: the slow oracle is stopped at its budget (`sandbox_timeout`), every other hostile spec gets its
    clean verdict, and the good tasks' verdicts are exactly their in-process ones."""
    usable_runtime(runtime)
    texts, kinds = _batch()
    tasks = tmp_path / "batch.jsonl"
    tasks.write_text("\n".join(texts) + "\n", encoding="utf-8")
    where = ("--run-id", "hostile", "--data-root", tmp_path)
    proc = cli(
        "generate",
        "--tasks",
        tasks,
        "--shards",
        "1",
        "--workers",
        "2",
        "--runtime",
        runtime,
        "--task-budget-s",
        str(BUDGET_S),
        *where,
    )
    assert proc.returncode == 0, proc.stderr
    proc = cli("validate", *where)
    assert proc.returncode == 0, proc.stderr
    lines = (
        (tmp_path / "runs" / "hostile" / "validated" / "shard-0000.validations.jsonl")
        .read_text(encoding="utf-8")
        .splitlines()
    )
    verdicts = [json.loads(line) for line in lines]
    assert len(verdicts) == len(texts)
    for text, kind, verdict in zip(texts, kinds, verdicts, strict=True):
        if kind is None:
            assert verdict == validate_spec_json(text) and verdict["valid"], verdict["task_id"]
        elif kind.name == "slow-oracle":
            [row] = verdict["results"]
            assert (verdict["task_id"], row["code"]) == ("hostile-slow-oracle", "sandbox_timeout")
            assert f"budget of {BUDGET_S:g} s" in row["details"]["error"]
        else:
            assert_clean(verdict, kind)
    assert "sandbox_timeout 1" in proc.stdout


def test_the_in_process_commands_finish_on_a_regex_bomb(tmp_path: Path):
    """`check`, `run` and `grade` evaluate checks in-process: `^(a+)+$` against 'a'*40+'!' is decided at once (RE2)."""
    bomb = next(h for h in HOSTILE if h.name == "regex-bomb")
    task = tmp_path / "bomb.json"
    task.write_text(bomb.text, encoding="utf-8")
    check = cli("check", task)
    assert check.returncode == 1 and "bomb (notes/bomb.txt does not contain regex '^(a+)+$')" in " ".join(
        check.stdout.split()
    )
    trajectory = tmp_path / "t.json"
    run = cli("run", "--task", task, "--out", trajectory)
    assert run.returncode == 0 and "score=0.9" in run.stderr, run.stderr
    grade = cli("grade", "--task", task, "--trajectory", trajectory)
    assert grade.returncode == 0, grade.stderr
    checks = {c["id"]: c["passed"] for c in json.loads(grade.stdout)["checks"]}
    assert checks["bomb"] is False and sum(checks.values()) == len(BASE["checks"])


def test_the_in_process_commands_refuse_a_regex_re2_cannot_run(tmp_path: Path):
    refused = next(h for h in HOSTILE if h.name == "regex-backreference")
    task = tmp_path / "backref.json"
    task.write_text(refused.text, encoding="utf-8")
    for args in (("check", task), ("run", "--task", task)):
        proc = cli(*args)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, (args, proc.stderr)
        assert (
            len(proc.stderr.strip().splitlines()) == 1 and "not supported by the linear-time engine" in proc.stderr
        ), proc.stderr


def test_the_in_process_commands_stop_a_slow_oracle_at_their_budget(tmp_path: Path):
    """Without a sandbox, `check`, `run` and `grade` still bound each task: the slow oracle (about 30 s of replay)
    stops at `--budget-s`, as a failed task under `check` and a one-line error, with nothing written, under `run` and
    `grade`."""
    spec = json.loads(slow_oracle().text)
    task = tmp_path / "slow.json"
    task.write_text(json.dumps(spec), encoding="utf-8")
    check = cli("check", task, "--budget-s", "1")
    assert check.returncode == 1, check.stderr
    assert f"{spec['id']}: ran past its budget of 1 s and was stopped" in " ".join(check.stdout.split())
    run = cli("run", "--task", task, "--out", tmp_path / "t.json", "--budget-s", "1")
    assert (
        run.returncode == 2
        and run.stderr == f"error: {spec['id']}: the oracle episode: ran past its budget of 1 s and was stopped\n"
    )
    assert not (tmp_path / "t.json").exists()
    calls = [
        {
            "id": f"c{i}",
            "type": "function",
            "function": {"name": "mail_search", "arguments": json.dumps({"query": "no-such-words"})},
        }
        for i in range(490)
    ]
    trajectory = tmp_path / "searches.json"
    trajectory.write_text(
        json.dumps({"task_id": spec["id"], "messages": [{"role": "assistant", "tool_calls": calls}]}), encoding="utf-8"
    )
    grade = cli("grade", "--task", task, "--trajectory", trajectory, "--budget-s", "1")
    assert grade.returncode == 2 and grade.stdout == "", grade.stderr
    assert grade.stderr == f"error: grading {trajectory}: ran past its budget of 1 s and was stopped\n"
