"""The pipeline's commands, through the real console script, as the README gives them: a run started with `generate`
(or with `--tasks` files), carried through `validate`, `repair`, `rollout`, `build`, `gate` and `publish` over the
run directory; and every bad input as one line on stderr with exit code 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from coworkenv.data.reader import read_manifest
from tests.support import EXAMPLES, ROOT

CLI = Path(sys.executable).parent / "coworkenv"
CORPUS = ROOT / "tests" / "repair" / "corpus"
ENV = {k: v for k, v in os.environ.items() if k != "COWORKENV_DATA_ROOT"} | {"COLUMNS": "200"}


def cli(*args: str | Path, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(CLI), *map(str, args)], capture_output=True, text=True, env=ENV, cwd=cwd, timeout=600, check=False
    )


def assert_one_line_error(proc: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr + proc.stdout and proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    for needle in needles:
        assert needle.lower() in lines[0].lower(), (needle, lines[0])


def test_generate_starts_a_run_directory_and_is_deterministic(tmp_path):
    for name in ("a", "b"):
        proc = cli(
            "generate", "--n", "30", "--seed", "2", "--shards", "3", "--run-id", "gen", "--data-root", tmp_path / name
        )
        assert proc.returncode == 0, proc.stderr
        assert "run gen: 30 task(s) in 3 shard(s), 0 rejection(s)" in proc.stdout
    run_a, run_b = tmp_path / "a" / "runs" / "gen", tmp_path / "b" / "runs" / "gen"
    config = json.loads((run_a / "config.json").read_text())
    assert config["n"] == 30 and config["shards"] == 3 and json.loads((run_a / "plan.json").read_text())["n"] == 30
    shards = sorted((run_a / "generated").glob("shard-*.tasks.jsonl"))
    assert len(shards) == 3 and sum(len(p.read_text().splitlines()) for p in shards) == 30
    for shard in shards:  # the same settings give byte-identical tasks
        assert shard.read_bytes() == (run_b / "generated" / shard.name).read_bytes()


def test_settings_come_from_a_yaml_file_and_options_override_it(tmp_path):
    config = tmp_path / "run.yaml"
    config.write_text("n: 8\nseed: 3\nfamilies: [mail_triage]\nshards: 1\n", encoding="utf-8")
    proc = cli("generate", "--config", config, "--n", "5", "--run-id", "y", "--data-root", tmp_path)
    assert proc.returncode == 0, proc.stderr
    saved = json.loads((tmp_path / "runs" / "y" / "config.json").read_text())
    assert (saved["n"], saved["seed"], saved["families"], saved["shards"]) == (5, 3, ["mail_triage"], 1)


def test_generate_from_a_plan_file(tmp_path):
    profile = tmp_path / "profile.json"
    profile.write_text(
        json.dumps(
            {"model": "m", "rows": [{"capability": "retrieval", "difficulty": 3, "attempts": 50, "pass_rate": 0.5}]}
        )
    )
    plan = tmp_path / "plan.json"
    proc = cli("plan", "--profile", profile, "--n", "100", "--out", plan)
    assert proc.returncode == 0, proc.stderr
    assert sum(r["count"] for r in json.loads(plan.read_text())["rows"]) == 100
    proc = cli("generate", "--n", "100", "--plan", plan, "--run-id", "p", "--data-root", tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads((tmp_path / "runs" / "p" / "plan.json").read_text()) == json.loads(plan.read_text())


@pytest.mark.slow
def test_stage_by_stage_publishes_what_synthesize_publishes(tmp_path):
    """The README's step-by-step path: generate, validate (sandboxed), repair, rollout, build, gate, publish, each a
    command over the run directory — and the release is the one `coworkenv synthesize` publishes for the same run."""
    settings = (
        "--n",
        "12",
        "--seed",
        "4",
        "--shards",
        "2",
        "--workers",
        "1",
        "--families",
        "report_chain,sheet_join,injection_guard",
    )
    stepped = ("--run-id", "steps", "--data-root", tmp_path / "stepped")
    assert cli("generate", *settings, *stepped).returncode == 0
    for stage in ("validate", "repair", "rollout", "build"):
        proc = cli(stage, *stepped)
        assert proc.returncode == 0, (stage, proc.stdout, proc.stderr)
    premature = cli("publish", *stepped)
    assert_one_line_error(premature, "not passed the gates")
    for stage in ("gate", "publish"):
        proc = cli(stage, *stepped)
        assert proc.returncode == 0, (stage, proc.stdout, proc.stderr)
    whole = cli("synthesize", *settings, "--run-id", "steps", "--data-root", tmp_path / "whole")
    assert whole.returncode == 0, whole.stderr
    stepped_manifest, whole_manifest = (
        read_manifest(tmp_path / "stepped", "latest"),
        read_manifest(tmp_path / "whole", "latest"),
    )
    assert stepped_manifest.release_id == whole_manifest.release_id and stepped_manifest.row_counts["tasks"] == 12
    assert stepped_manifest.content_hashes == whole_manifest.content_hashes


@pytest.mark.slow
def test_hand_written_and_broken_tasks_are_validated_repaired_and_gated(tmp_path):
    """Tasks taken from files: validated in the sandbox, the broken ones repaired, rolled out and built; the gate then
    refuses the families no generator registers, and publish refuses ungated tables."""
    broken = [
        CORPUS / "01_wrong_expected_number.json",
        CORPUS / "09_answer_without_number.json",
        CORPUS / "25_leaked_answer.json",
    ]
    args = ("--run-id", "hand", "--data-root", tmp_path)
    proc = cli("generate", "--tasks", EXAMPLES, *(a for p in broken for a in ("--tasks", p)), "--shards", "2", *args)
    assert proc.returncode == 0, proc.stderr
    n = len(list(EXAMPLES.glob("*.json"))) + len(broken)
    assert f"{n} task(s) in 2 shard(s)" in proc.stdout
    validate = cli("validate", *args)
    assert validate.returncode == 0 and f"{n - 3}/{n} task(s) valid" in validate.stdout, validate.stderr
    assert (
        "rejection reasons" not in validate.stdout + validate.stderr
    )  # the stage's log summary is for Airflow's task log
    repair = cli("repair", *args)
    assert repair.returncode == 0 and "of 3 invalid task(s) repaired" in repair.stdout, repair.stderr
    run = tmp_path / "runs" / "hand"
    repaired = [json.loads(line) for line in (run / "repaired" / "tasks.jsonl").read_text().splitlines()]
    verdicts = [json.loads(line) for line in (run / "repaired" / "validations.jsonl").read_text().splitlines()]
    assert repaired and len(verdicts) == len(repaired) and all(v["valid"] for v in verdicts)
    assert {r["meta"]["parent"] for r in repaired} <= {json.loads(p.read_text())["id"] for p in broken}
    for stage in ("rollout", "build"):
        proc = cli(stage, *args)
        assert proc.returncode == 0, (stage, proc.stdout, proc.stderr)
    assert f"tasks {n - 3 + len(repaired)}" in proc.stdout
    gate = cli("gate", *args)
    assert gate.returncode == 1 and "known_family" in gate.stderr
    assert (
        gate.stderr.count("gate 'validated' failed") == 1 and gate.stdout == ""
    )  # said once: the log's copy stays in the library
    assert (
        "great_expectations" not in gate.stderr
        and f"Data Docs: {run / 'quality' / 'data_docs' / 'validated' / 'index.html'}" in gate.stderr
    )
    assert_one_line_error(cli("publish", *args), "not passed the gates")


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (("generate", "--difficulty-min", "4", "--difficulty-max", "2"), ("difficulty_min", "above")),
        (("generate", "--families", "mail_trage"), ("did you mean 'mail_triage'",)),
        (("generate", "--capabilities", "telepathy"), ("unknown capability",)),
        (("generate", "--generator", "llm"), ("needs an LLM endpoint",)),
        (("generate", "--runtime", "docker"), ("runtime",)),
        (("generate", "--n", "0"), ("n:", "greater than or equal to 1")),
        (("generate", "--config", "nowhere.yaml"), ("nowhere.yaml", "no such file")),
        (("generate", "--tasks", "nowhere.jsonl"), ("nowhere.jsonl",)),
        (("synthesize", "--llm-conn-id", "my_llm", "--generator", "llm"), ("airflow connection",)),
        (
            ("synthesize", "--judge-conn-id", "my_judge"),
            ("judge_conn_id", "airflow connection", "COWORKENV_JUDGE_BASE_URL"),
        ),
        (("validate", "--run-id", "never-started"), ("never-started", "generate")),
        (("repair", "--run-id", "never-started"), ("never-started",)),
        (("publish", "--run-id", "never-started"), ("never-started",)),
        (("gate", "examples/tasks"), ("--run-id", "coworkenv check")),
    ],
    ids=lambda v: "-".join(v) if isinstance(v, tuple) and all(isinstance(x, str) for x in v) else None,
)
def test_bad_input_is_one_line_exit_2(tmp_path, args, needles):
    assert_one_line_error(cli(*args, "--data-root", tmp_path) if args[0] != "gate" else cli(*args), *needles)


@pytest.mark.parametrize("stage", ["validate", "repair", "rollout", "build", "gate", "publish"])
def test_a_stage_of_an_unknown_run_leaves_no_run_behind(tmp_path, stage):
    # Regression (fixed): `build` made the run's folder before finding it empty, and `gate` told of a missing Parquet
    # file in pyarrow's words.
    assert_one_line_error(
        cli(stage, "--run-id", "never-started", "--data-root", tmp_path), "never-started", "does not exist", "generate"
    )
    assert not (tmp_path / "runs").exists()


def test_gate_on_a_run_that_was_not_built_says_build_it(tmp_path):
    assert cli("generate", "--n", "2", "--run-id", "r", "--data-root", tmp_path).returncode == 0
    assert_one_line_error(
        cli("gate", "--run-id", "r", "--data-root", tmp_path), "'r' has no staged tables", "build it first"
    )


@pytest.mark.parametrize(
    ("text", "needle"),
    [("- just\n- a list\n", "expected a mapping"), ("n: [unclosed\n", "not valid YAML"), ("nn: 20\n", "nn")],
)
def test_bad_config_files(tmp_path, text, needle):
    config = tmp_path / "run.yaml"
    config.write_text(text, encoding="utf-8")
    assert_one_line_error(cli("generate", "--config", config, "--data-root", tmp_path), needle)


def test_plan_takes_generates_settings(tmp_path):
    out = tmp_path / "plan.json"
    proc = cli(
        "plan",
        "--n",
        "40",
        "--difficulty-min",
        "2",
        "--difficulty-max",
        "3",
        "--families",
        "mail_triage,sheet_join",
        "--out",
        out,
    )
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(out.read_text())["rows"]
    assert sum(r["count"] for r in rows) == 40 and {r["difficulty"] for r in rows} == {2, 3}
    assert {r["family"] for r in rows} == {"mail_triage", "sheet_join"}
    too_high = "Lowest difficulty (difficulty_min) 5 is above Highest difficulty (difficulty_max) 1"
    assert_one_line_error(cli("plan", "--difficulty-min", "5", "--difficulty-max", "1"), too_high)
