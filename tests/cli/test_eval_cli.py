"""`coworkenv eval`, `eval compare`, `eval bench` and `model tiny` through the real console script, as the README gives
them: a benchmark release, evaluations of the oracle, a baseline and the tiny model with their reports and profiles, a
paired comparison; and every bad input as one `error:` line on stderr with exit code 2."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from coworkenv.data.reader import latest_release, list_releases, read_manifest, read_table
from coworkenv.spec.capabilities import CapabilityProfile
from tests.support import ROOT
from tests.support.suites import example_tasks, publish_task_release, write_suite

CLI = Path(sys.executable).parent / "coworkenv"
OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
N_BENCH = 6
URL = re.compile(r"https?://|(?:src|href)=\"//")


def cli(*args: str | Path, data_root: Path, cwd: Path = ROOT, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **OFFLINE, "COWORKENV_DATA_ROOT": str(data_root), "COLUMNS": "200"}
    return subprocess.run(
        [str(CLI), *map(str, args)], capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout, check=False
    )


def ok(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 0, (proc.returncode, proc.stdout[-3000:], proc.stderr[-3000:])
    return proc.stdout


def assert_one_line_error(proc: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr + proc.stdout and proc.stdout == "", proc.stdout
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    for needle in needles:
        assert needle.lower() in lines[0].lower(), (needle, lines[0])


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    """A working folder whose `data/` (COWORKENV_DATA_ROOT) holds a 6-task coworkenv-bench release."""
    home = tmp_path_factory.mktemp("eval-cli")
    out = ok(cli("eval", "bench", "--n", N_BENCH, "--workers", "1", data_root=home / "data"))
    assert re.search(
        rf"published benchmark release r-coworkenv-bench-n{N_BENCH}-seed0-\w+: {N_BENCH} valid task\(s\) of {N_BENCH}",
        out,
    )
    assert "general 2, multi_step 2, multi_turn 2" in out
    return home


@pytest.fixture(scope="module")
def oracle_report(home) -> Path:
    out = ok(
        cli(
            "eval",
            "--agent",
            "oracle",
            "--suite",
            "bench",
            "--trials",
            "2",
            "--out",
            "reports/oracle",
            "--run-id",
            "cli-oracle",
            data_root=home / "data",
            cwd=home,
        )
    )
    assert "evaluation cli-oracle: oracle on bench, 2 trial(s) per task" in out
    assert (
        f"suite coworkenv-bench: {N_BENCH} task(s)" in out
        and f"trials: {2 * N_BENCH} played, {2 * N_BENCH} passed, 0 crashed" in out
    )
    assert "gate evaluated: passed" in out and re.search(
        r"release r-cli-oracle-\w+ \(kind eval\); report: reports/oracle/report.html", out
    )
    assert re.search(r"│ all\s+│ 6\s+│ 1\.00 \[1\.00, 1\.00\]", out)  # the table: pass rate with its interval
    return home / "reports" / "oracle"


def test_eval_bench_publishes_a_benchmark_release(home):
    [bench] = [m for m in list_releases(home / "data") if m.kind == "benchmark"]
    assert (
        bench.row_counts["tasks"] == N_BENCH and latest_release(home / "data") is None
    )  # only task releases are LATEST
    again = ok(cli("eval", "bench", "--n", N_BENCH, "--workers", "1", data_root=home / "data"))
    assert bench.release_id in again  # deterministic: the same release again


def test_each_stage_of_a_started_evaluation_is_a_command(home, oracle_report, tmp_path):
    """`coworkenv eval trials | build | gate | publish --run-id R`, made from the evaluation job's declaration: a
    finished run's trials are kept, its tables rebuilt, gated and published again as the same release (in a copy of
    the data root: the other tests read the run as `coworkenv eval` left it)."""
    data = shutil.copytree(home / "data", tmp_path / "data")
    [before] = [m.release_id for m in list_releases(data) if m.run_id == "cli-oracle"]
    assert (
        ok(cli("eval", "trials", "--run-id", "cli-oracle", data_root=data))
        .strip()
        .endswith(f"run cli-oracle: {2 * N_BENCH} trials, {2 * N_BENCH} passed, 0 failed to run")
    )
    assert f"run cli-oracle: {2 * N_BENCH} rows, pass rate 1.000; report: " in ok(
        cli("eval", "build", "--run-id", "cli-oracle", data_root=data)
    )
    assert re.search(
        r"gate evaluated: (\d+)/\1 expectations hold", ok(cli("eval", "gate", "--run-id", "cli-oracle", data_root=data))
    )
    assert f"published release {before}: " in ok(cli("eval", "publish", "--run-id", "cli-oracle", data_root=data))
    assert_one_line_error(cli("eval", "gate", "--run-id", "no-such-run", data_root=data), "no-such-run")
    assert_one_line_error(cli("eval", "build", data_root=data), "coworkenv eval build", "--run-id")


@pytest.mark.slow
def test_the_oracle_report_summary_and_profile(home, oracle_report):
    html = (oracle_report / "report.html").read_text(encoding="utf-8")
    pngs = sorted(p.name for p in oracle_report.glob("*.png"))
    assert pngs and html.count('src="data:image/png;base64,') == len(pngs)  # every plot embedded
    assert not URL.search(html) and "<script src" not in html and "<link" not in html  # self-contained: no CDN
    summary = json.loads((oracle_report / "summary.json").read_text())
    assert (summary["agent"], summary["k"], summary["eval_id"], summary["suite"]) == (
        "oracle",
        2,
        "cli-oracle",
        "coworkenv-bench",
    )
    for figure in ("pass_rate", "pass_at_k", "pass_hat_k", "mean_score"):
        assert summary["overall"][figure]["value"] == 1.0, figure
    assert summary["overall"]["safety_violation_rate"]["value"] == 0.0 and summary["overall"]["n_tasks"] == N_BENCH
    assert set(summary["groups"]) == {"general", "multi_step", "multi_turn"} and summary["capabilities"]
    profile = CapabilityProfile.model_validate_json((oracle_report / "profile.json").read_text())
    assert profile.model == "oracle" and all(row.pass_rate == 1.0 for row in profile.rows)
    [release] = [m for m in list_releases(home / "data") if m.run_id == "cli-oracle"]
    assert release.kind == "eval" and release.row_counts["eval_results"] == 2 * N_BENCH
    table = read_table(home / "data", release.release_id, "capability_profile").to_pylist()
    assert [(r["capability"], r["difficulty"], r["attempts"]) for r in table] == [
        (r.capability, r.difficulty, r.attempts) for r in profile.rows
    ]
    # without --out the report goes to the run's report/ folder
    assert not (home / "data" / "runs" / "cli-oracle" / "report").exists()


@pytest.mark.slow
def test_compare_prints_p_values_and_writes_a_report(home, oracle_report):
    random = (
        "--agent",
        "random",
        "--suite",
        "bench",
        "--trials",
        "2",
        "--seed",
        "3",
        "--runtime",
        "none",
        "--run-id",
        "cli-random",
    )
    ok(cli("eval", *random, data_root=home / "data"))
    assert (home / "data" / "runs" / "cli-random" / "report" / "report.html").exists()
    [oracle] = [m.release_id for m in list_releases(home / "data") if m.run_id == "cli-oracle"]
    out = ok(
        cli("eval", "compare", oracle, "cli-random", "--out", home / "cmp", data_root=home / "data")
    )  # a release id, a run id
    assert f"random (cli-random) against oracle ({oracle}) on {N_BENCH} paired task(s)" in out
    score = re.search(
        r"mean score: 1\.000 → (\d\.\d+), delta (-\d\.\d+) \[.*\], p = ([\d.e-]+) \((not )?significant at 0\.05\)", out
    )
    assert score and float(score.group(2)) < 0 and 0 < float(score.group(3)) <= 1, out
    assert re.search(r"pass rate: 1\.000 → 0\.000, delta -1\.000 .*p = [\d.e-]+", out)
    assert "group general" in out and "multi_turn" in out  # per group and per capability
    comparison = json.loads((home / "cmp" / "comparison.json").read_text())
    assert comparison["n_paired"] == N_BENCH and comparison["overall"]["mean_score"]["p_value"] == pytest.approx(
        float(score.group(3)), rel=1e-3
    )
    html = (home / "cmp" / "report.html").read_text(encoding="utf-8")
    assert (home / "cmp" / "comparison.png").exists() and html.count("data:image/png;base64,") == len(
        list((home / "cmp").glob("*.png"))
    )
    assert not URL.search(html)


@pytest.mark.slow
def test_the_tiny_model_through_the_cli(home):
    out = ok(cli("model", "tiny", "--out", "models/tiny", data_root=home / "data", cwd=home))
    assert "tiny model written to models/tiny" in out
    out = ok(
        cli(
            "eval",
            "--agent",
            "hf:models/tiny",
            "--suite",
            "bench",
            "--trials",
            "1",
            "--limit",
            "3",
            "--max-new-tokens",
            "24",
            "--max-turns",
            "2",
            "--run-id",
            "cli-tiny",
            data_root=home / "data",
            cwd=home,
        )
    )
    assert "evaluation cli-tiny: hf:models/tiny on bench" in out and "trials: 3 played" in out
    manifest = read_manifest(
        home / "data", [m.release_id for m in list_releases(home / "data") if m.run_id == "cli-tiny"][0]
    )
    rows = read_table(home / "data", manifest.release_id, "eval_results").to_pylist()
    assert {(r["agent"], r["model"]) for r in rows} == {("hf:tiny", "tiny")} and len(rows) == 3
    assert all(0 < r["completion_tokens"] <= 24 * r["n_turns"] for r in rows)  # --max-new-tokens holds per turn


PROGRESS_LINE = re.compile(r"^playing: (\d+)/4 \((\d+)%\)(?:, [\d.]+(?:/s| s/trial), (?:ETA|done in) \d+:\d\d)?$")
"""A line; the first report has no rate yet (`ProgressLines.rate`): on a slow machine the first trial alone is due."""


def test_progress_is_plain_lines_on_stderr_when_it_is_not_a_terminal(tmp_path):
    """Captured stderr (a log file, a pipe, a pod's log) is no terminal: no rich bar, but progress lines, the last one
    when every trial has finished; stdout keeps the results alone."""
    suite = write_suite(tmp_path / "suite.jsonl", example_tasks()[:2])
    proc = cli(
        "eval",
        "--agent",
        "oracle",
        "--suite",
        suite,
        "--trials",
        "2",
        "--workers",
        "1",
        "--runtime",
        "none",
        "--run-id",
        "logged",
        data_root=tmp_path / "data",
        cwd=tmp_path,
    )
    ok(proc)
    lines = proc.stderr.splitlines()
    assert lines and all(PROGRESS_LINE.match(line) for line in lines), proc.stderr
    assert lines[-1].startswith("playing: 4/4 (100%), ") and " done in " in lines[-1]
    assert (
        "\x1b[" not in proc.stderr
        and "playing" not in proc.stdout
        and "trials: 4 played, 4 passed, 0 crashed" in proc.stdout
    )


def test_a_contaminated_suite_is_one_line_and_publishes_nothing(tmp_path):
    tasks = example_tasks()
    suite = write_suite(tmp_path / "suite.jsonl", tasks)
    publish_task_release(tmp_path / "data", tasks[:1])
    proc = cli("eval", "--suite", suite, "--run-id", "dirty", data_root=tmp_path / "data")
    assert_one_line_error(proc, "contaminated suite: 1 of 4 tasks", f"{tasks[0].id} ~ {tasks[0].id} (workspace)")
    assert [m.kind for m in list_releases(tmp_path / "data")] == ["tasks"]
    assert not (tmp_path / "data" / "runs" / "dirty" / "eval" / "trials.jsonl").exists()


@pytest.fixture(scope="module")
def suites(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("suites")
    good = write_suite(folder / "good.jsonl", example_tasks()[:1])
    (folder / "bad.jsonl").write_text(good.read_text() + '{"id": "half a task"}\n', encoding="utf-8")
    (folder / "one.json").write_text(good.read_text(), encoding="utf-8")
    return folder


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (("--agent", "oracel", "--suite", "good.jsonl"), ("unknown agent 'oracel'", "did you mean 'oracle'")),
        (("--agent", "gpt4:x", "--suite", "good.jsonl"), ("unknown agent 'gpt4'",)),
        (("--suite", "nowhere.jsonl"), ("nowhere.jsonl", "no such file")),
        (("--suite", "bad.jsonl"), ("bad.jsonl:2",)),
        (("--suite", "one.json"), ("one.json", ".jsonl")),
        (("--suite", "bench"), ("no benchmark release", "coworkenv eval bench")),
        (("--suite", "r-nothing-here"), ("r-nothing-here",)),
        (("--trials", "0", "--suite", "good.jsonl"), ("--trials", "greater than or equal to 1")),
        (("--workers", "many", "--suite", "good.jsonl"), ("--workers",)),
        (("--runtime", "docker", "--suite", "good.jsonl"), ("runtime",)),
        (("--agent", "hf:no/such/model", "--suite", "good.jsonl"), ("hf:no/such/model: no such model directory",)),
        (("--agent", "openai:x", "--suite", "good.jsonl"), ("openai:x", "needs an LLM endpoint")),
        (("--agent", "openai:x", "--llm-conn-id", "my_llm", "--suite", "good.jsonl"), ("airflow connection",)),
        (("--user", "llm", "--suite", "good.jsonl"), ("user (user) 'llm' needs an LLM endpoint",)),
        (("--max-contaminated-share", "2", "--suite", "good.jsonl"), ("--max-contaminated-share",)),
        (("compare", "nope", "nope-2"), ("'nope' is neither an evaluation release nor an evaluation run",)),
        (("bench", "--n", "2"), ("--n", "greater than or equal to 3")),
        (("sft", "--run-id", "nope", "--out", "own.parquet"), ("run 'nope' is not an evaluation run",)),
    ],
    ids=lambda v: "-".join(v) if isinstance(v, tuple) and all(isinstance(x, str) for x in v) else None,
)
def test_bad_input_is_one_line_exit_2(tmp_path, suites, args, needles):
    proc = cli("eval", *args, data_root=tmp_path / "data", cwd=suites)
    assert_one_line_error(proc, *needles)
    assert not (tmp_path / "data" / "releases").exists()


def test_an_endpoint_that_never_answers_records_and_publishes_nothing(tmp_path, suites):
    """Every trial without a single reply is a broken agent, not a model that scores 0: nothing to publish, and the
    same run id plays the trials again once the endpoint is fixed."""
    from tests.dags.standalone import free_port

    url = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there: connection refused
    proc = cli(
        "eval",
        "--agent",
        "openai:m",
        "--llm-base-url",
        url,
        "--suite",
        "good.jsonl",
        "--trials",
        "2",
        "--run-id",
        "down",
        data_root=tmp_path / "data",
        cwd=suites,
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    *progress, error = (
        proc.stderr.splitlines()
    )  # the trials' progress lines (stderr is no terminal here), then the error
    assert error.startswith("error: openai:m answered none of the 2 trials (reply_error: ") and all(
        p.startswith("playing: ") for p in progress
    )
    assert "nothing recorded or published" in proc.stderr
    assert not (tmp_path / "data" / "releases").exists()
    assert not (tmp_path / "data" / "runs" / "down" / "eval" / "trials.jsonl").exists()


def test_a_base_url_that_is_no_url_is_refused_before_any_trial(tmp_path, suites):
    proc = cli(
        "eval",
        "--agent",
        "openai:m",
        "--llm-base-url",
        "not a url",
        "--suite",
        "good.jsonl",
        data_root=tmp_path / "data",
        cwd=suites,
    )
    assert_one_line_error(proc, "not an http(s) URL: 'not a url'")
    assert not (tmp_path / "data" / "runs").exists()
