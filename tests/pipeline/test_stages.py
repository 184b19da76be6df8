"""The stages over the run directory, called as the DAG and the CLI call them (in-process runtime: the sandboxed paths
are exercised by the CLI and DAG tests)."""

from __future__ import annotations

import json
import logging

import pytest

from coworkenv.data.reader import read_manifest, read_table
from coworkenv.errors import CoworkEnvError
from coworkenv.pipeline.config import SynthesisConfig
from coworkenv.pipeline.release_tables import gate_tables
from coworkenv.pipeline.rundir import RunDir, read_jsonl, safe_name, valid_tasks, validated, verdicts
from coworkenv.pipeline.synthesis import GATES, synthesize
from coworkenv.pipeline.synthesis.build import build_tables
from coworkenv.pipeline.synthesis.generate import generate_shard, import_tasks
from coworkenv.pipeline.synthesis.plan import plan_run, start_run
from coworkenv.pipeline.synthesis.publish import publish
from coworkenv.pipeline.synthesis.repair import repair_run
from coworkenv.pipeline.synthesis.rollout import rollout_run
from coworkenv.pipeline.synthesis.validate import validate_shard
from coworkenv.validate.codes import BATTERY_CODES
from tests.support import EXAMPLES, ROOT

CONFIG = SynthesisConfig(
    n=10, seed=3, shards=2, runtime="none", families=["mail_triage", "csv_aggregate", "flaky_sync"]
)
BROKEN = ROOT / "tests" / "repair" / "corpus" / "01_wrong_expected_number.json"


def test_plan_deals_rows_onto_shards_and_records_the_config(tmp_path):
    run = RunDir.open("p", tmp_path)
    shards = plan_run(run, CONFIG)
    assert len(shards) == 2 and sum(s["tasks"] for s in shards) == 10 and all(s["rows"] for s in shards)
    assert run.config() == CONFIG and json.loads(run.file("shards.json").read_text()) == shards


def test_a_given_plan_must_make_the_n_tasks_asked_for(tmp_path):
    from coworkenv.synth.generate import plan_for

    plan = plan_for(CONFIG.model_copy(update={"n": 12}))
    with pytest.raises(CoworkEnvError, match="the plan makes 12 task\\(s\\) but n is 10; give --n 12"):
        plan_run(RunDir.open("p", tmp_path), CONFIG, plan)
    assert (
        sum(s["tasks"] for s in plan_run(RunDir.open("q", tmp_path), CONFIG.model_copy(update={"n": 12}), plan)) == 12
    )


def logged(caplog: pytest.LogCaptureFixture, logger: str) -> str:
    return "\n".join(r.getMessage() for r in caplog.records if r.name == logger)


def test_stages_in_order_publish_a_release_and_every_file_is_where_the_layout_says(tmp_path, caplog):
    caplog.set_level(logging.INFO)  # what Airflow's task log shows
    run = RunDir.open("manual__2026-12-02T10:00:00+00:00", tmp_path)
    assert run.path.name == "manual__2026-12-02T10:00:00+00:00"  # the run id as the UI shows it
    for shard in plan_run(run, CONFIG):
        generate_shard(run, shard)
    results = [validate_shard(run, shard) for shard in run.shard_ids()]
    assert sum(r["tasks"] for r in results) == 10 and all(r["valid"] == r["tasks"] for r in results)
    assert repair_run(run) == {"invalid": 0, "repaired": 0, "metrics": {}}
    assert rollout_run(run) == {"trajectories": 10, "passed": 10}
    rows = build_tables(run)
    assert rows["tasks"] == 10 and rows["validations"] == 10 * len(BATTERY_CODES) and rows["sft"] == 10
    with pytest.raises(CoworkEnvError, match="not passed the gates"):
        publish(run)
    gate_tables(run, GATES)
    manifest = publish(run)
    assert manifest.run_id == run.run_id and read_manifest(tmp_path, "latest").release_id == manifest.release_id
    for path in (
        "config.json",
        "plan.json",
        "shards.json",
        "generated/shard-0000.tasks.jsonl",
        "validated/shard-0001.validations.jsonl",
        "repaired/attempts.jsonl",
        "rollouts/trajectories.jsonl",
        "tables/tasks.parquet",
        "quality/passed.json",
    ):
        assert run.file(path).exists(), path

    # each stage's summary, through its module's logger
    assert logged(caplog, "coworkenv.pipeline.synthesis.plan").startswith(
        "plan: 10 tasks (generator procedural, seed 3) from "
    )
    assert "by family: " in logged(caplog, "coworkenv.pipeline.synthesis.plan")
    assert logged(caplog, "coworkenv.pipeline.synthesis.generate").count("generate shard ") == 2
    assert {
        r["shard"]: f"validate shard {r['shard']}: {r['tasks']} tasks, {r['tasks']} valid, 0 rejected" for r in results
    } == {
        r["shard"]: line
        for r in results
        for line in logged(caplog, "coworkenv.pipeline.synthesis.validate").splitlines()
        if f"shard {r['shard']}:" in line
    }
    assert logged(caplog, "coworkenv.pipeline.synthesis.repair") == "repair: nothing to repair (no task was rejected)"
    assert (
        logged(caplog, "coworkenv.pipeline.synthesis.rollout")
        == "rollout: the oracle played 10 valid tasks: 10 passed, 0 did not"
    )
    tables = logged(caplog, "coworkenv.pipeline.release_tables")  # staged by build, then gated
    assert f"rows: tasks 10, validations {10 * len(BATTERY_CODES)}, " in tables
    for stage in ("validated", "rollouts"):
        index = run.file("quality", "data_docs", stage, "index.html")
        assert (
            f"gate {stage!r} passed: 0 of " in tables
            and f"Data Docs: {index}" in tables
            and index.is_file()
            and index.is_absolute()
        )
    assert logged(caplog, "coworkenv.pipeline.synthesis.publish").startswith(
        f"published release {manifest.release_id} (parent none) at {tmp_path}"
    )
    rows_line = f"rows: tasks 10, validations {10 * len(BATTERY_CODES)}, repairs 0, trajectories 10, sft 10"
    assert rows_line in logged(caplog, "coworkenv.pipeline.synthesis.publish")
    assert not [
        r.getMessage() for r in caplog.records if r.name.startswith("great_expectations")
    ]  # the gates are quiet


def test_new_tables_need_the_gates_again(tmp_path):
    run = RunDir.open("again", tmp_path)
    manifest = synthesize(CONFIG, "again", tmp_path)
    build_tables(run)  # the same tables, but built after the gates: not vouched for any more
    with pytest.raises(CoworkEnvError, match="not passed the gates"):
        publish(run)
    gate_tables(run, GATES)
    assert publish(run).release_id == manifest.release_id  # and a rerun of a run id is the same release


STAGE_DIRS = ("generated", "validated", "repaired", "rollouts", "tables", "quality")


def test_a_new_plan_clears_what_an_earlier_start_left(tmp_path):
    run = RunDir.open("r", tmp_path)
    for shard in plan_run(run, CONFIG):  # every stage but publish
        generate_shard(run, shard)
    for shard in run.shard_ids():
        validate_shard(run, shard)
    for stage in (repair_run, rollout_run, build_tables):
        stage(run)
    gate_tables(run, GATES)
    plan_run(run, CONFIG.model_copy(update={"n": 4, "shards": 1}))
    for stage in STAGE_DIRS:
        assert not run.file(stage).exists(), stage
    with pytest.raises(CoworkEnvError, match="no generated tasks"):
        run.shard_ids()


def test_a_published_run_starts_again_only_with_its_own_settings(tmp_path):
    run = RunDir.open("done", tmp_path)
    manifest = synthesize(CONFIG, "done", tmp_path)
    with pytest.raises(CoworkEnvError, match=f"run 'done' published release {manifest.release_id} with other settings"):
        plan_run(run, CONFIG.model_copy(update={"n": 4}))
    assert (
        all(run.file(stage).is_dir() for stage in STAGE_DIRS) and run.config() == CONFIG
    )  # refused before anything is cleared
    assert synthesize(CONFIG, "done", tmp_path) == manifest  # its own settings: the same release again


def test_tasks_from_files_are_validated_and_the_broken_one_repaired(tmp_path, caplog):
    caplog.set_level(logging.INFO)
    run = RunDir.open("files", tmp_path)
    start_run(run, CONFIG.model_copy(update={"repair_rounds": 2}))
    shards = import_tasks(run, [EXAMPLES, BROKEN], shards=3)
    n = len(list(EXAMPLES.glob("*.json"))) + 1
    assert [s["shard"] for s in shards] == [0, 1, 2] and sum(s["tasks"] for s in shards) == n
    for shard in run.shard_ids():
        validate_shard(run, shard)
    invalid = [v for _, v in validated(run) if not v.valid]
    assert [v.task_id for v in invalid] == [json.loads(BROKEN.read_text())["id"]]
    result = repair_run(run)
    assert result["repaired"] == 1 and result["metrics"]["rescue_rate"] == 1.0
    (repaired,) = [json.loads(line) for line in read_jsonl(run.file("repaired", "tasks.jsonl"))]
    assert repaired["meta"]["parent"] == invalid[0].task_id
    assert {spec.id for spec, _ in valid_tasks(verdicts(run))} >= {repaired["id"]} and len(
        list(valid_tasks(verdicts(run)))
    ) == n

    # the validate log names the rejection reason with the rejected task and the battery's message
    failure = next(r for r in invalid[0].failures if r.severity == "mandatory")
    validate_log = logged(caplog, "coworkenv.pipeline.synthesis.validate")
    assert (
        f"1 rejected; top rejection reasons:\n  {failure.code}: 1 task, e.g. {invalid[0].task_id}: {failure.message[:60]}"
        in validate_log
    )
    [strategy] = {
        a["strategy"] for a in map(json.loads, read_jsonl(run.file("repaired", "attempts.jsonl"))) if a["kept"]
    }
    assert logged(caplog, "coworkenv.pipeline.synthesis.repair") == (
        "repair: 1 rejected tasks: 1 rescued (100% of those tried), 0 still rejected; by strategy:\n"
        f"  {strategy}: tried on 1 task, rescued 1, still rejected 0"
    )


def test_unparseable_lines_are_rejected_with_a_label_and_skipped_by_repair(tmp_path, caplog):
    caplog.set_level(logging.INFO)
    run = RunDir.open("junk", tmp_path)
    start_run(run, CONFIG)
    junk = tmp_path / "junk.jsonl"
    junk.write_text('{"id": "x", "family": 3}\nnot json at all\n[1, 2]\n', encoding="utf-8")
    import_tasks(run, [junk], shards=1)
    validate_shard(run, 0)
    verdicts = [v for _, v in validated(run)]
    assert [v.valid for v in verdicts] == [False, False, False]
    assert [v.task_id for v in verdicts] == ["x", "shard-0000.tasks.jsonl:2", "shard-0000.tasks.jsonl:3"]
    assert repair_run(run)["invalid"] == 1  # only the JSON object can be repaired at all
    validate_log = logged(caplog, "coworkenv.pipeline.synthesis.validate")
    assert validate_log.startswith(
        "validate shard 0: 3 tasks, 0 valid, 3 rejected; top rejection reasons:\n  schema: 3 tasks, e.g. x: "
    )
    assert logged(caplog, "coworkenv.pipeline.synthesis.repair").startswith(
        "repair: 3 rejected tasks (2 not a JSON object, not repairable): 0 rescued"
    )


def test_stages_of_a_run_that_was_not_started(tmp_path):
    run = RunDir.open("nothing", tmp_path)
    with pytest.raises(CoworkEnvError, match="has not been planned"):
        run.config()
    start_run(run, CONFIG)
    with pytest.raises(CoworkEnvError, match="no generated tasks"):
        run.shard_ids()


def test_run_ids_and_data_roots(tmp_path):
    with pytest.raises(CoworkEnvError, match="non-empty run id"):
        safe_name(" ")
    for airflow_id in (
        "manual__2026-12-02T10:00:00.123456+00:00",
        "scheduled__2026-12-02T00:00:00+00:00",
        "cli__2026-12-02T10-00-00Z",
        "r.evaluate",
    ):
        assert safe_name(airflow_id) == airflow_id
    assert safe_name("../a b/c").startswith(".._a_b_c-")  # one folder under runs/, whatever the id
    assert len({safe_name("a/b"), safe_name("a b"), safe_name("a_b")}) == 3  # and never another id's folder
    for dots in (".", ".."):
        with pytest.raises(CoworkEnvError, match="not a name"):
            RunDir.open(dots, tmp_path)
    with pytest.raises(CoworkEnvError, match="local"):
        RunDir.open("x", "memory://bucket/root")


def test_the_release_reads_back(tmp_path):
    manifest = synthesize(CONFIG, "read", tmp_path)
    tasks = read_table(tmp_path, manifest.release_id, "tasks").to_pylist()
    assert len(tasks) == 10 and all(t["oracle_score"] == 1.0 for t in tasks)


def test_a_release_continues_its_own_line_not_whatever_is_latest(tmp_path):
    """A synthesis release's parent is the newest release of its line (`lineage`); a nightly's training release in
    between (another line, now LATEST) is not it, and publishing the same run again keeps the same parent."""
    from coworkenv.data.reader import latest_release

    def made(run_id: str, **settings) -> str:
        config = SynthesisConfig(n=2, seed=len(run_id), shards=1, workers=1, runtime="none", **settings)
        return synthesize(config, run_id, tmp_path).release_id

    first = made("synth-1")
    nightly = made("nightly-1.synthesize", lineage="nightly-agent")
    second = made("synth-2")
    parents = {m.release_id: m.parent for m in (read_manifest(tmp_path, r) for r in (first, nightly, second))}
    assert parents == {first: None, nightly: None, second: first}
    assert latest_release(tmp_path) == second
    assert made("nightly-2.synthesize", lineage="nightly-agent") != nightly
    assert read_manifest(tmp_path, "latest").parent == nightly
    assert read_manifest(tmp_path, made("synth-2")).parent == first  # the same run again: the same release
