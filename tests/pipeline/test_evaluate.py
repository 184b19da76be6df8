"""The evaluation run (`coworkenv.pipeline.evaluation`), stage by stage over the run directory: prepare (suite and
contamination check) → trials (resumable) → build (tables, report, profile) → gate (`evaluated`) → publish (kind
`eval`). Real agents, real episodes (runtime `none`: the suites are trusted), real Parquet and Great Expectations."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from coworkenv.data.reader import latest_release, list_releases, read_table
from coworkenv.errors import CoworkEnvError
from coworkenv.eval.contamination import ContaminationError
from coworkenv.eval.suite import SUITE_NAME, build_bench
from coworkenv.pipeline import evaluation as stages
from coworkenv.pipeline.config import EvaluationConfig, evaluation_config
from coworkenv.pipeline.evaluation.build import build
from coworkenv.pipeline.evaluation.prepare import prepare
from coworkenv.pipeline.evaluation.publish import publish
from coworkenv.pipeline.evaluation.trials import agent_options, run_trials_stage
from coworkenv.pipeline.release_tables import gate_tables
from coworkenv.pipeline.rundir import RunDir
from coworkenv.quality.gates import GateFailed
from coworkenv.rollout import read_trials
from coworkenv.spec.capabilities import CapabilityProfile
from coworkenv.synth.generate import GenerateRequest, generate
from tests.support.suites import example_tasks, publish_task_release, write_suite

N_BENCH = 6
TIMINGS = ("wall_s",)


def settings(**values) -> EvaluationConfig:
    return EvaluationConfig(**{"runtime": "none", "workers": 1, **values})


@pytest.fixture(scope="module")
def bench_root(tmp_path_factory) -> tuple[Path, str, str]:
    """A data root with a task release (LATEST: the default training data) and a 6-task coworkenv-bench release."""
    root = tmp_path_factory.mktemp("data")
    specs, _ = generate(GenerateRequest(n=6, seed=4))
    training = publish_task_release(root, specs)
    bench = build_bench(N_BENCH, data_root=root, runtime="none", workers=1)
    assert bench.valid == N_BENCH
    return root, training.release_id, bench.release_id


@pytest.fixture
def examples_suite(tmp_path) -> Path:
    return write_suite(tmp_path / "examples.jsonl", example_tasks())


def without(rows: list[dict], columns=TIMINGS) -> list[dict]:
    return [{k: v for k, v in row.items() if k not in columns} for row in rows]


def staged_rows(run: RunDir, table: str = "eval_results") -> list[dict]:
    return pq.read_table(run.file("tables", f"{table}.parquet")).to_pylist()


def play(run: RunDir, config: EvaluationConfig) -> RunDir:
    """prepare → trials → build."""
    prepare(run, config)
    run_trials_stage(run)
    build(run)
    return run


# --- the oracle, stage by stage ------------------------------------------------------------------------------------


def test_the_oracle_stage_by_stage(bench_root, caplog):
    caplog.set_level(logging.INFO, logger="coworkenv")
    root, training, bench = bench_root
    run = RunDir.open("eval-oracle", root)
    config = settings(agent="oracle", suite="bench", trials=3)

    prepared = prepare(run, config)
    assert (prepared["name"], prepared["kind"], prepared["release_id"], prepared["tasks"]) == (
        SUITE_NAME,
        "benchmark",
        bench,
        N_BENCH,
    )
    assert (
        prepared["training_releases"] == [training] and prepared["contaminated"] == 0
    )  # LATEST, and the bench is held out
    assert json.loads(run.file("eval", "contamination.json").read_text())["training_releases"] == [training]
    assert stages.read_config(run) == config and len(stages.suite_tasks(run)) == N_BENCH
    assert not run.file("eval", "trials.jsonl").exists()

    assert run_trials_stage(run) == {"trials": N_BENCH * 3, "failed": 0, "passed": N_BENCH * 3}
    records = read_trials(run.file("eval", "trials.jsonl"))
    assert len({r.key for r in records}) == len(records) == N_BENCH * 3
    assert all(r.audit and r.trace and r.grade.score == 1.0 for r in records)  # the evidence channels are kept

    built = build(run)
    assert built["eval_results"] == N_BENCH * 3 and built["pass_rate"] == 1.0
    rows = staged_rows(run)
    assert {(r["score"], r["passed"], r["status"], r["agent"], r["suite"], r["eval_id"]) for r in rows} == {
        (1.0, True, "ok", "oracle", SUITE_NAME, "eval-oracle")
    }
    assert len(staged_rows(run, "trajectories")) == N_BENCH * 3
    summary = stages.summary_of(run)
    assert summary["k"] == 3 and summary["agent"] == "oracle"
    for figure in ("pass_rate", "pass_hat_k", "pass_at_k", "mean_score"):
        assert summary["overall"][figure] == {"value": 1.0, "lo": 1.0, "hi": 1.0}, figure
    assert set(summary["groups"]) == {"general", "multi_step", "multi_turn"}

    gate_tables(run, stages.GATES)
    manifest = publish(run)
    assert manifest.kind == "eval" and manifest.parent == bench and manifest.run_id == "eval-oracle"
    assert manifest.row_counts["eval_results"] == N_BENCH * 3 and manifest.row_counts["tasks"] == 0
    assert latest_release(root) == training  # an eval release never moves LATEST
    assert read_table(root, manifest.release_id, "eval_results").to_pylist() == rows
    assert (
        stages.eval_rows(manifest.release_id, root) == stages.eval_rows("eval-oracle", root) == rows
    )  # a release id or a run id

    logged = [  # the stages' lines and the gate's (not the staging of the tables)
        r.getMessage()
        for r in caplog.records
        if r.name.startswith("coworkenv.pipeline.evaluation.") or r.getMessage().startswith("gate ")
    ]
    assert logged[:3] == [
        f"prepare: suite {SUITE_NAME} (benchmark, {N_BENCH} tasks) for agent oracle; contamination against {training}: 0 tasks similar, "
        f"max similarity {prepared['max_similarity']:.2f}",
        f"trials: {N_BENCH * 3} trials of oracle (3 per task): {N_BENCH * 3} passed, 0 did not, 0 failed to run",
        f"build: {N_BENCH * 3} eval_results rows, pass rate 1.000; report: {run.file('report', 'report.html')}",
    ]
    assert (
        logged[3].startswith("gate 'evaluated' passed: 0 of ")
        and run.file("quality", "data_docs", "evaluated", "index.html").is_file()
    )
    assert logged[4].startswith(f"published evaluation release {manifest.release_id} (parent {bench}) at ")


def test_the_capability_profile_table_is_the_profile_json(bench_root):
    root, _, _ = bench_root
    run = play(RunDir.open("eval-profile", root), settings(agent="random", suite="bench", trials=2, seed=1))
    table = staged_rows(run, "capability_profile")
    profile_json = json.loads(run.file("report", "profile.json").read_text())
    loaded = CapabilityProfile.model_validate(profile_json)  # what `coworkenv plan --profile` reads
    assert loaded.model == "random" and table
    cells = [(r["model"], r["capability"], r["difficulty"], r["attempts"], r["pass_rate"]) for r in table]
    assert cells == [(loaded.model, c.capability, c.difficulty, c.attempts, c.pass_rate) for c in loaded.rows]
    assert sum(r["attempts"] for r in table) == sum(len(t.capabilities) for t in stages.suite_tasks(run)) * 2


# --- baselines -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("agent", ["null", "random"])
def test_the_baselines_pass_nothing(bench_root, agent):
    root, _, _ = bench_root
    manifest = stages.evaluate(settings(agent=agent, suite="bench", trials=2, seed=5), f"eval-{agent}", root)
    rows = read_table(root, manifest.release_id, "eval_results").to_pylist()
    assert len(rows) == N_BENCH * 2 and not any(r["passed"] for r in rows) and {r["agent"] for r in rows} == {agent}
    summary = stages.summary_of(RunDir.open(f"eval-{agent}", root))
    assert summary["overall"]["pass_rate"]["value"] == 0.0 and summary["overall"]["pass_hat_k"]["value"] == 0.0
    if agent == "null":
        assert {r["score"] for r in rows} == {0.0} and all(r["empty"] for r in rows)
    else:
        assert all(r["n_turns"] >= 1 for r in rows)  # it did call tools
        again = stages.evaluate(settings(agent=agent, suite="bench", trials=2, seed=5), f"eval-{agent}", root)
        assert again == manifest  # the same run again: nothing left to play, the same tables, publishing is a no-op


# --- contamination -------------------------------------------------------------------------------------------------


def test_a_contaminated_suite_is_refused_before_anything_is_played(tmp_path, examples_suite):
    tasks = example_tasks()
    training = publish_task_release(tmp_path / "data", tasks[1:3])  # two of the suite's four tasks
    run = RunDir.open("eval-dirty", tmp_path / "data")
    with pytest.raises(ContaminationError) as refused:
        stages.evaluate(settings(suite=str(examples_suite)), "eval-dirty", tmp_path / "data")
    message = str(refused.value)
    assert "\n" not in message and "2 of 4 tasks" in message
    for task in tasks[1:3]:
        assert f"{task.id} ~ {task.id} (workspace)" in message
    report = json.loads(run.file("eval", "contamination.json").read_text())
    assert report["training_releases"] == [training.release_id] and report["contaminated_ids"] == [
        t.id for t in tasks[1:3]
    ]
    assert not run.file("eval", "suite.jsonl").exists() and not run.file("eval", "trials.jsonl").exists()
    assert [m.kind for m in list_releases(tmp_path / "data")] == ["tasks"]
    # named explicitly, or with the share allowed, the same suite runs
    allowed = settings(
        suite=str(examples_suite), train_releases=[training.release_id], max_contaminated_share=0.5, trials=1
    )
    assert prepare(run, allowed)["contaminated"] == 2


# --- resume and reproducibility ------------------------------------------------------------------------------------


def test_a_cut_trials_file_resumes_to_the_same_rows(tmp_path, examples_suite):
    """Random on hand-written example tasks (families no generator registers: still publishable). The trials file
    loses its last lines and gets a torn one; the rerun plays only what is missing: same unique rows, same content."""
    config = settings(agent="random", suite=str(examples_suite), trials=3, seed=7)
    whole = play(RunDir.open("eval-r", tmp_path / "whole"), config)
    cut = RunDir.open("eval-r", tmp_path / "cut")
    prepare(cut, config)
    run_trials_stage(cut)
    path = cut.file("eval", "trials.jsonl")
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join(lines[:-4]) + lines[-4][:50], encoding="utf-8")  # three lines gone, one torn
    advanced: list[int] = []
    assert run_trials_stage(cut, progress=advanced.append)["trials"] == 12
    assert sum(advanced) == 12  # the 8 kept trials count at once, then the 4 played again
    records = read_trials(path)
    assert len(records) == len({r.key for r in records}) == 12 and path.read_bytes().endswith(b"\n")
    build(cut)
    assert without(staged_rows(cut)) == without(staged_rows(whole))
    gate_tables(cut, stages.GATES)
    assert publish(cut).row_counts["eval_results"] == 12


def test_a_run_resumed_with_fewer_trials_builds_only_those(tmp_path, examples_suite):
    run = RunDir.open("eval-fewer", tmp_path / "data")
    play(run, settings(suite=str(examples_suite), trials=3))
    prepare(run, settings(suite=str(examples_suite), trials=2, limit=3))
    assert run_trials_stage(run)["trials"] == 6
    assert build(run)["eval_results"] == 6
    assert sorted((r["task_id"], r["trial"]) for r in staged_rows(run)) == sorted(
        (t.id, k) for t in example_tasks()[:3] for k in range(2)
    )


@pytest.fixture(scope="module")
def bench_file(bench_root, tmp_path_factory) -> Path:
    """The bench release's tasks as a .jsonl suite, for runs in data roots of their own."""
    from coworkenv.eval.suite import load_suite

    return write_suite(tmp_path_factory.mktemp("suite") / "bench.jsonl", load_suite("bench", bench_root[0]).tasks)


@pytest.mark.parametrize("agent", ["oracle", "random"])
def test_the_same_settings_give_the_same_rows(tmp_path, bench_file, agent):
    """Two runs (same run id, separate data roots), two workers each: finishing order varies, the rows do not."""
    config = settings(agent=agent, suite=str(bench_file), trials=2, seed=11, workers=2)
    first = play(RunDir.open(f"eval-same-{agent}", tmp_path / "a"), config)
    second = play(RunDir.open(f"eval-same-{agent}", tmp_path / "b"), config)
    rows = staged_rows(first)
    assert len(rows) == N_BENCH * 2 and without(rows) == without(staged_rows(second))
    assert staged_rows(first, "capability_profile") == staged_rows(second, "capability_profile")
    assert stages.summary_of(first)["overall"] == stages.summary_of(second)["overall"]


@pytest.mark.slow
def test_the_tiny_model_greedy_gives_the_same_rows(tmp_path, tiny_model_dir, examples_suite):
    config = settings(
        agent=f"hf:{tiny_model_dir}", suite=str(examples_suite), trials=1, limit=3, max_new_tokens=24, max_turns=2
    )
    first = play(RunDir.open("eval-tiny", tmp_path / "a"), config)
    second = play(RunDir.open("eval-tiny", tmp_path / "b"), config)
    rows = staged_rows(first)
    assert (
        len(rows) == 3 and {r["agent"] for r in rows} == {"hf:tiny"} and all(r["completion_tokens"] > 0 for r in rows)
    )
    assert without(rows) == without(staged_rows(second))
    records = [r.without_timings() for r in read_trials(first.file("eval", "trials.jsonl"))]
    assert records == [r.without_timings() for r in read_trials(second.file("eval", "trials.jsonl"))]


# --- the gate and publish ------------------------------------------------------------------------------------------


def _rewrite(run: RunDir, edit) -> None:
    path = run.file("tables", "eval_results.parquet")
    table = pq.read_table(path)
    pq.write_table(edit(table), path)


def _set(table: pa.Table, column: str, value) -> pa.Table:
    i = table.schema.get_field_index(column)
    values = table.column(i).to_pylist()
    values[0] = value
    return table.set_column(i, table.schema.field(i), pa.array(values, table.schema.field(i).type))


def test_the_gate_and_publish_refuse_edited_tables(tmp_path, examples_suite):
    root = tmp_path / "data"
    run = play(RunDir.open("eval-edit", root), settings(suite=str(examples_suite), trials=1))
    _rewrite(run, lambda t: _set(t, "score", 0.5))  # off the scoring formula: what a grader bug would write
    with pytest.raises(GateFailed, match="score_formula"):
        gate_tables(run, stages.GATES)
    with pytest.raises(CoworkEnvError, match="not passed the gates"):
        publish(run)

    build(run)
    gate_tables(run, stages.GATES)
    _rewrite(run, lambda t: t.slice(1))  # still valid rows, but not the ones the gate passed
    with pytest.raises(CoworkEnvError, match="not passed the gates"):
        publish(run)
    assert list_releases(root) == []
    build(run)
    gate_tables(run, stages.GATES)
    assert publish(run).kind == "eval" and latest_release(root) is None


# --- settings refused before anything runs -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "needle"),
    [
        ({"agent": "oracel"}, "did you mean 'oracle'"),
        ({"agent": "hf:no/such/model"}, "Agent (agent): hf:no/such/model: no such model directory"),
        ({"agent": "hf"}, "needs a local model directory"),
        ({"agent": "openai:gpt-x"}, "needs an LLM endpoint"),
        ({"agent": "openai", "llm_base_url": "http://127.0.0.1:9/v1"}, "needs a model"),
        ({"user": "llm"}, "Simulated user (user) 'llm' needs an LLM endpoint"),
    ],
)
def test_an_agent_that_cannot_run_is_refused_by_its_settings(examples_suite, values, needle):
    """Refused by the config model, so before any run exists: in the CLI, the trigger form and the DAG's first task."""
    with pytest.raises(CoworkEnvError, match=re.escape(needle)):
        evaluation_config({"suite": str(examples_suite), "runtime": "none", **values})


def test_an_openai_agent_takes_its_model_and_reply_limit_from_the_run(tmp_path, examples_suite):
    """`openai:<model>` with only a base URL: the model is the agent's (no llm_model needed, in the CLI, the library or
    a DAG); `max_new_tokens` is its max_tokens."""
    from tests.support.instant_endpoint import instant_endpoint

    config = settings(
        agent="openai:m1",
        suite=str(examples_suite),
        trials=1,
        limit=2,
        max_turns=3,
        max_new_tokens=32,
        llm_base_url="http://127.0.0.1:9/v1",
    )  # the instant endpoint's URL replaces it
    with instant_endpoint(calls=1) as endpoint:
        config = config.model_copy(update={"llm_base_url": endpoint.base_url})
        assert config.llm() is not None and config.llm().model == "m1"
        assert agent_options(config, config.llm())["llm"].max_tokens == 32
        unset = config.model_copy(update={"max_new_tokens": None})
        assert agent_options(unset, unset.llm())["llm"].max_tokens == 6000  # the endpoint settings' own
        manifest = stages.evaluate(config, "eval-openai", tmp_path / "data")
        assert endpoint.stats()["requests"] == 4  # one call and one answer per task
    rows = read_table(tmp_path / "data", manifest.release_id, "eval_results").to_pylist()
    assert {(r["agent"], r["model"], r["status"]) for r in rows} == {("openai:m1", "m1", "ok")} and len(rows) == 2
    assert all(r["prompt_tokens"] > 0 and r["n_turns"] == 2 for r in rows)


def test_a_run_with_trials_resumes_only_with_the_same_trial_settings(tmp_path):
    suite = write_suite(tmp_path / "suite.jsonl", example_tasks()[:2])
    run = RunDir.open("resume-settings", tmp_path / "data")
    config = EvaluationConfig(agent="oracle", suite=str(suite), trials=1, runtime="none", workers=1)
    prepare(run, config)
    run_trials_stage(run)
    with pytest.raises(CoworkEnvError, match="already holds trials with agent 'oracle'"):
        prepare(run, config.model_copy(update={"agent": "random"}))
    assert stages.read_config(run).agent == "oracle"  # nothing was overwritten
    prepare(run, config.model_copy(update={"trials": 2}))  # more trials of the same evaluation: a resume
    assert stages.read_config(run).trials == 2
