"""`coworkenv validate` end to end (through the console script) and `validate_tasks` (in-process and through a
stand-in for the sandbox pool)."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import types
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from coworkenv.spec.task import TaskSpec
from coworkenv.synth.family import load_families
from coworkenv.synth.generate import build_task
from coworkenv.validate.batch import guess_task_id, validate_tasks
from coworkenv.validate.codes import BATTERY_CODES

ROOT = Path(__file__).resolve().parents[2]
CLI = Path(sys.executable).parent / "coworkenv"
EXAMPLE = ROOT / "examples" / "tasks" / "08_multi_turn_vendor_demo.json"
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "COLUMNS": "200"}
HAS_POOL = importlib.util.find_spec("coworkenv.sandbox.pool") is not None


def cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(CLI), *map(str, args)], capture_output=True, text=True, env=ENV, cwd=ROOT, timeout=300, check=False)


def task(family: str, seed: int = 0, difficulty: int = 3) -> TaskSpec:
    return build_task(load_families().get(family), seed, difficulty)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("validate-in")
    good = [task("mail_triage"), task("sheet_join", 1), task("multi_turn_booking", 2)]
    bad = TaskSpec.model_validate({**json.loads(task("mail_triage", 5).to_json()), "capabilities": ["communication", "robustness"]})
    # declares robustness without faults: capabilities_consistent fails
    lines = [good[0].to_json(), "not json", good[1].to_json(), "", bad.to_json(), "[1, 2]", good[2].to_json()]
    tasks_dir = root / "tasks"
    tasks_dir.mkdir()
    (tasks_dir / "batch.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    shutil.copy(EXAMPLE, tasks_dir / "example.json")  # pretty-printed over many lines
    (tasks_dir / "ignored.txt").write_text("not a task")
    empty_dir = root / "empty"
    empty_dir.mkdir()
    (root / "blank.jsonl").write_text("\n\n")
    return {"root": root, "dir": tasks_dir, "good": good, "bad": bad, "empty_dir": empty_dir, "blank": root / "blank.jsonl"}


@pytest.fixture(scope="module")
def runs(inputs) -> dict[str, subprocess.CompletedProcess[str]]:
    root = inputs["root"]
    calls = {
        "ok": ("validate", inputs["dir"], "--out", root / "out", "--runtime", "none", "--workers", "2"),
        "missing": ("validate", root / "nope.jsonl", "--out", root / "o1", "--runtime", "none"),
        "empty_dir": ("validate", inputs["empty_dir"], "--out", root / "o2", "--runtime", "none"),
        "blank": ("validate", inputs["blank"], "--out", root / "o3", "--runtime", "none"),
        "bad_runtime": ("validate", inputs["dir"], "--out", root / "o4", "--runtime", "docker"),
        "out_is_file": ("validate", inputs["dir"], "--out", inputs["blank"], "--runtime", "none"),
    }
    if HAS_POOL:
        calls["sandboxed"] = ("validate", inputs["dir"], "--out", root / "out-sandboxed", "--workers", "2")
    with ThreadPoolExecutor(max_workers=4) as pool:
        done = dict(zip(calls, pool.map(lambda args: cli(*args), calls.values()), strict=True))
    return done


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_writes_valid_rejected_results_and_summary(inputs, runs):
    proc = runs["ok"]
    assert proc.returncode == 0, proc.stderr
    out = inputs["root"] / "out"
    good_ids = [t.id for t in inputs["good"]]

    valid = read_jsonl(out / "valid.jsonl")
    assert [TaskSpec.model_validate(v).id for v in valid] == [good_ids[0], good_ids[1], good_ids[2], "example-08-multi-turn-vendor-demo"]
    assert (out / "valid.jsonl").read_text().splitlines()[0] == inputs["good"][0].to_json()  # the raw line, untouched

    rejected = read_jsonl(out / "rejected.jsonl")
    assert [r["failed_codes"] for r in rejected] == [["schema"], ["capabilities_consistent"], ["schema"]]
    assert rejected[0]["task"] == "not json" and rejected[0]["source"].endswith("batch.jsonl:2")
    assert rejected[0]["task_id"] == rejected[0]["source"]  # no id of its own: labelled by where it came from
    assert rejected[1]["task_id"] == inputs["bad"].id and json.loads(rejected[1]["task"])["id"] == inputs["bad"].id

    rows = read_jsonl(out / "results.jsonl")
    table = pq.read_table(out / "results.parquet")
    assert table.column_names == ["task_id", "code", "passed", "severity", "discriminating", "details", "message"]
    assert table.to_pylist() == rows
    assert len(rows) == 5 * len(BATTERY_CODES) + 2  # five tasks ran the battery, two never parsed
    assert all(isinstance(json.loads(r["details"]), dict) for r in rows)
    assert {r["code"] for r in rows} == set(BATTERY_CODES)
    per_task = pq.read_table(out / "tasks.parquet").to_pylist()
    assert [t["valid"] for t in per_task] == [True, False, True, False, False, True, True]

    summary = json.loads((out / "summary.json").read_text())
    assert summary["tasks"] == 7 and summary["valid"] == 4 and summary["rejected"] == 3
    assert summary["valid_share"] == pytest.approx(4 / 7, abs=1e-6)
    assert summary["rejections_by_code"] == {"schema": 2, "capabilities_consistent": 1}
    assert summary["failures_by_code"]["schema"] == 2
    assert 0 < summary["mean_discrimination"] < 1 and summary["runtime"] == "none"
    assert "4/7 tasks valid" in proc.stdout and "capabilities_consistent" in proc.stdout


@pytest.mark.parametrize("case", ["missing", "empty_dir", "blank", "bad_runtime", "out_is_file"])
def test_bad_input_exits_2_with_one_line(runs, case):
    proc = runs[case]
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert proc.stderr.strip().startswith("error:") and len(proc.stderr.strip().splitlines()) == 1
    assert "Traceback" not in proc.stderr


@pytest.mark.skipif(not HAS_POOL, reason="coworkenv.sandbox.pool is not there yet")
def test_default_sandboxed_runtime_agrees_with_in_process(inputs, runs):
    proc = runs["sandboxed"]
    assert proc.returncode == 0, proc.stderr
    local = pq.read_table(inputs["root"] / "out" / "tasks.parquet").to_pylist()
    sandboxed = pq.read_table(inputs["root"] / "out-sandboxed" / "tasks.parquet").to_pylist()
    assert [(t["task_id"], t["valid"], t["discrimination"]) for t in sandboxed] == [(t["task_id"], t["valid"], t["discrimination"]) for t in local]


# --- validate_tasks --------------------------------------------------------------------------------------------


def test_validate_tasks_in_process_keeps_order_and_reports_progress():
    good = task("doc_lookup")
    ticks = []
    out = validate_tasks([good.to_json(), "{", good, json.loads(good.to_json())], workers=3, runtime="none", progress=ticks.append,
                         names=["a", "b", "c", "d"])  # fmt: skip
    assert [v.valid for v in out] == [True, False, True, True] and sum(ticks) == 4
    assert [v.task_id for v in out] == [good.id, "b", good.id, good.id]
    assert out[1].results[0].task_id == "b"


def test_guess_task_id_reads_only_a_leading_id():
    assert guess_task_id('{"id": "t-1", "x": 1}') == "t-1"
    assert guess_task_id('{"family": "f", "id": "t-1"}') == ""
    assert guess_task_id("not json") == ""


@dataclass
class FakeJobResult:
    index: int
    ok: bool
    output: Any = None
    error_code: str | None = None
    error: str | None = None


def test_sandbox_failures_become_invalid_tasks_with_the_sandbox_code(monkeypatch):
    from coworkenv.validate.battery import validate_spec_json

    calls = {}

    def run_jobs(job, payloads, *, workers=2, runtime="auto", limits=None, progress=None):
        calls.update(job=job, payloads=list(payloads), workers=workers, runtime=runtime)
        results = [
            FakeJobResult(0, True, validate_spec_json(payloads[0])),
            FakeJobResult(1, False, error_code="sandbox_timeout", error="killed after 60 s"),
            FakeJobResult(2, True, "garbage"),
        ]
        for _ in results:
            progress and progress()
        return list(reversed(results))  # order comes from `index`, not from the list

    monkeypatch.setitem(sys.modules, "coworkenv.sandbox.pool", types.SimpleNamespace(run_jobs=run_jobs))
    good = task("csv_aggregate")
    ticks = []
    out = validate_tasks([good, good.to_json(), good.to_json()], workers=4, runtime="rlimit", progress=ticks.append)
    assert calls["job"] == "validate" and calls["workers"] == 4 and calls["runtime"] == "rlimit"
    assert all(isinstance(p, str) for p in calls["payloads"])  # raw text goes to the sandbox
    assert out[0].valid and len(ticks) == 3
    timeout = out[1]
    assert not timeout.valid and timeout.task_id == good.id and timeout.failed_codes == ["sandbox_timeout"]
    assert timeout.results[0].details == {"error_code": "sandbox_timeout", "error": "killed after 60 s"}
    assert out[2].failed_codes == ["sandbox_bad_output"]
