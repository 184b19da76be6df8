"""Generation at scale: every capability and service covered, variety, determinism, every task gated."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from coworkenv.grading.consistency import consistency_gate
from coworkenv.spec import CAPABILITIES, SERVICE_NAMES
from coworkenv.synth.family import load_families
from coworkenv.synth.generate import GenerateRequest, generate, summarize

COWORKENV = str(Path(sys.executable).parent / "coworkenv")


def test_same_request_same_tasks():
    first, _ = generate(GenerateRequest(n=200, seed=4))
    again, _ = generate(GenerateRequest(n=200, seed=4))
    assert [t.to_json() for t in first] == [t.to_json() for t in again]
    other, _ = generate(GenerateRequest(n=200, seed=5))
    assert {t.id for t in first}.isdisjoint({t.id for t in other})


def test_filters_restrict_families_capabilities_and_difficulty():
    tasks, _ = generate(GenerateRequest(n=60, seed=1, capabilities=["data_analysis"], difficulty=(2, 3)))
    assert all("data_analysis" in t.capabilities or "data_analysis" in load_families().get(t.family).capabilities for t in tasks)
    assert {t.difficulty for t in tasks} == {2, 3}
    tasks, _ = generate(GenerateRequest(n=10, seed=1, families=["mail_triage"]))
    assert {t.family for t in tasks} == {"mail_triage"} and len(tasks) == 10


@pytest.mark.slow
def test_ten_thousand_tasks_cover_everything_vary_and_pass_the_gate():
    tasks, rejections = generate(GenerateRequest(n=10_000, seed=1))
    assert not rejections, rejections[:3]
    assert len(tasks) == 10_000 and len({t.id for t in tasks}) == 10_000
    summary = summarize(tasks)
    assert set(summary.by_family) == set(load_families().names())
    covered_caps = {c for t in tasks for c in t.capabilities}
    assert covered_caps == set(CAPABILITIES.names())
    covered_services = {step.tool.split("_")[0] for t in tasks for step in t.solution if hasattr(step, "tool")}
    assert covered_services == set(SERVICE_NAMES)
    duplicate_instructions = sum(c - 1 for c in Counter(t.instruction for t in tasks).values())
    assert duplicate_instructions / len(tasks) < 0.01
    assert len({t.initial_state_hash for t in tasks}) == len(tasks)
    failures = [(t.id, g.failures) for t in tasks if not (g := consistency_gate(t)).passed]
    assert not failures, failures[:5]


def test_cli_generate_writes_jsonl_summary_and_plan(tmp_path):
    out = tmp_path / "gen"
    result = subprocess.run([COWORKENV, "generate", "--n", "40", "--seed", "2", "--out", str(out)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    lines = (out / "tasks.jsonl").read_text().splitlines()
    assert len(lines) == 40 and all(json.loads(line)["id"] for line in lines)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["tasks"] == 40 and sum(summary["by_difficulty"].values()) == 40
    assert json.loads((out / "plan.json").read_text())["n"] == 40
    assert "40 tasks, 0 rejections" in result.stdout
    again = subprocess.run([COWORKENV, "generate", "--n", "40", "--seed", "2", "--out", str(tmp_path / "again")], capture_output=True)
    assert again.returncode == 0
    assert (tmp_path / "again" / "tasks.jsonl").read_bytes() == (out / "tasks.jsonl").read_bytes()


def test_cli_plan_from_profile(tmp_path):
    profile = tmp_path / "profile.json"
    profile.write_text(json.dumps({"model": "m", "rows": [{"capability": "retrieval", "difficulty": 3, "attempts": 50, "pass_rate": 0.5}]}))
    plan_file = tmp_path / "plan.json"
    result = subprocess.run([COWORKENV, "plan", "--profile", str(profile), "--n", "100", "--out", str(plan_file)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    plan = json.loads(plan_file.read_text())
    assert sum(r["count"] for r in plan["rows"]) == 100
    args = [COWORKENV, "generate", "--n", "100", "--plan", str(plan_file), "--out", str(tmp_path / "g")]
    gen = subprocess.run(args, capture_output=True, text=True)
    assert gen.returncode == 0, gen.stderr


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--difficulty", "0-9"], "--difficulty"),
        (["--families", "mail_trage"], "did you mean 'mail_triage'"),
        (["--capabilities", "telepathy"], "unknown capability"),
        (["--generator", "llm"], "needs --llm-base-url"),
    ],
)
def test_cli_generate_bad_input_is_one_line_exit_2(tmp_path, args, needle):
    result = subprocess.run([COWORKENV, "generate", "--n", "3", "--out", str(tmp_path), *args], capture_output=True, text=True)
    assert result.returncode == 2
    assert needle in result.stderr and len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
