"""`coworkenv repair` through the real console script: validate → repair as a pipeline (the feedback is the
results.jsonl that `coworkenv validate` writes), TaskValidation feedback, the LLM options, and bad input →
exit code 2 with one line on stderr."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from coworkenv.validate.battery import validate_spec

from ._support import EXAMPLES, corpus_spec, load

CLI = Path(sys.executable).parent / "coworkenv"
ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "COLUMNS": "200"}


def cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    assert CLI.exists(), f"console script not found next to the interpreter: {CLI}"
    return subprocess.run([str(CLI), *map(str, args)], capture_output=True, text=True, env=ENV, cwd=ROOT, timeout=120, check=False)


def write_jsonl(path: Path, rows: list) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_validate_then_repair(tmp_path):
    broken = [corpus_spec(p) for p in ("01_", "08_", "10_", "25_", "26_")]
    tasks = write_jsonl(tmp_path / "tasks.jsonl", [*broken, load(EXAMPLES / "04_files_region_report.json")])
    validated = cli("validate", tasks, "--out", tmp_path / "v", "--runtime", "none", "--workers", "1")
    assert validated.returncode == 0, validated.stderr
    out = tmp_path / "r"
    proc = cli("repair", tmp_path / "v" / "rejected.jsonl", "--feedback", tmp_path / "v" / "results.jsonl", "--out", out)
    assert proc.returncode == 0, proc.stderr
    assert "feedback for 1 task(s)" in proc.stderr  # the valid example's results
    assert "oracle_scores_1" in proc.stdout and "rescue rate 80%" in proc.stdout

    repaired = read_jsonl(out / "repaired.jsonl")
    wanted = {f"{s['id']}-r1" for s in broken if s["meta"]["defect"]["repairable"]}
    assert {s["id"] for s in repaired} == wanted
    for spec in repaired:
        assert validate_spec(spec).valid and spec["meta"]["parent"] == spec["id"][:-3]
        assert spec["meta"]["repair"]["patch"] and spec["meta"]["repair"]["strategy"].startswith("rule:")

    (rejected,) = read_jsonl(out / "rejected.jsonl")
    assert rejected["task_id"] == broken[1]["id"] and rejected["failed_codes"] == ["oracle_scores_1"]
    assert "the oracle's own calls fail" in rejected["rejection"] and rejected["last_spec"]["id"] == broken[1]["id"]

    repairs = read_jsonl(out / "repairs.jsonl")
    assert {r["task_id"] for r in repairs} == {s["id"] for s in broken if s["meta"]["defect"]["repairable"]}
    for row in repairs:
        assert row["repaired_id"] == f"{row['task_id']}-r1" and row["round"] == 1 and row["patch"] and row["kept"]
        assert row["strategy"] == f"rule:{row['codes_addressed'][0]}"

    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["tasks"] == 5 and metrics["repaired"] == 4 and metrics["rejected"] == 1 and metrics["rescue_rate"] == 0.8
    assert metrics["by_code"]["no_leakage"] == {"failed": 2, "rescued": 2, "rescue_rate": 1.0}
    assert metrics["by_code"]["oracle_scores_1"]["failed"] == 3 and metrics["rounds_histogram"] == {"1": 4}


def test_task_validation_feedback_missing_feedback_and_keep_valid(tmp_path):
    leaked, valid = corpus_spec("25_"), load(EXAMPLES / "04_files_region_report.json")
    broken_schema = corpus_spec("16_")
    tasks = write_jsonl(tmp_path / "tasks.jsonl", [leaked, valid, broken_schema])
    feedback = write_jsonl(tmp_path / "fb.jsonl", [validate_spec(leaked).model_dump(mode="json")])  # none for the others
    out = tmp_path / "r"
    proc = cli("repair", tasks, "--feedback", feedback, "--out", out, "--rounds", "1", "--keep-valid")
    assert proc.returncode == 0, proc.stderr
    ids = [s["id"] for s in read_jsonl(out / "repaired.jsonl")]
    assert ids == [f"{leaked['id']}-r1", valid["id"], f"{broken_schema['id']}-r1"]
    assert read_jsonl(out / "rejected.jsonl") == []
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["initially_valid"] == 1 and metrics["by_code"]["schema"]["rescued"] == 1


def test_llm_options_reach_the_repairer(tmp_path, llm_server):
    spec = corpus_spec("18_")  # no final answer: only the LLM can fix it
    tasks = write_jsonl(tmp_path / "tasks.jsonl", [spec])
    feedback = write_jsonl(tmp_path / "fb.jsonl", [validate_spec(spec).model_dump(mode="json")])
    url = f"http://127.0.0.1:{llm_server.server_port}/v1"
    proc = cli("repair", tasks, "--feedback", feedback, "--out", tmp_path / "r", "--llm-base-url", url, "--llm-model", "tiny-repairer")
    assert proc.returncode == 0, proc.stderr
    (repaired,) = read_jsonl(tmp_path / "r" / "repaired.jsonl")
    assert repaired["meta"]["repair"]["strategy"] == "llm" and validate_spec(repaired).valid
    (attempt,) = read_jsonl(tmp_path / "r" / "repairs.jsonl")
    assert attempt["strategy"] == "llm" and attempt["valid_after"]


def test_bad_input_is_one_line_and_exit_code_2(tmp_path):
    spec = corpus_spec("25_")
    tasks = write_jsonl(tmp_path / "tasks.jsonl", [spec])
    feedback = write_jsonl(tmp_path / "fb.jsonl", [validate_spec(spec).model_dump(mode="json")])
    not_object = write_jsonl(tmp_path / "list.jsonl", [[1, 2]])
    bad_feedback = write_jsonl(tmp_path / "bad_fb.jsonl", [{"task_id": spec["id"], "passed": "maybe"}])
    out = tmp_path / "r"
    calls = [
        (("repair", tasks, "--feedback", tmp_path / "missing.jsonl", "--out", out), "no such file"),
        (("repair", tasks, "--feedback", feedback, "--out", out, "--llm-base-url", "http://127.0.0.1:9/v1"), "--llm-model"),
        (("repair", not_object, "--feedback", feedback, "--out", out), "expected a JSON object"),
        (("repair", tasks, "--feedback", bad_feedback, "--out", out), "not a battery result"),
    ]
    with ThreadPoolExecutor(max_workers=4) as pool:
        procs = list(pool.map(lambda call: cli(*call[0]), calls))
    for proc, (_, fragment) in zip(procs, calls, strict=True):
        assert proc.returncode == 2, (proc.stdout, proc.stderr)
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: ") and fragment in lines[0], proc.stderr
