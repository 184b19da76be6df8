"""`coworkenv-bench` (held-out phrasings, reserved seeds, the three groups, proven in the sandbox, published as a
benchmark release) and loading any release or JSONL file as a suite."""

from __future__ import annotations

import json
from collections import Counter

import pytest

import coworkenv.eval.suite as suite_module
from coworkenv.caps import InputCaps
from coworkenv.data.build import release_tables
from coworkenv.data.publisher import publish_release
from coworkenv.data.reader import latest_release, read_manifest, read_table
from coworkenv.errors import CoworkEnvError
from coworkenv.eval.suite import GROUPS, SUITE_NAME, bench_plan, build_bench, load_suite
from coworkenv.synth.draft import Draft
from coworkenv.synth.family import FAMILIES
from coworkenv.synth.generate import GenerateRequest, generate
from coworkenv.synth.planner import RESERVED_SEED_BASE, SEED_STRIDE
from coworkenv.validate.batch import validate_tasks
from coworkenv.validate.codes import BATTERY_CODES

N = 30
TASK, WRONG = "<a task>", "<a task of difficulty 9>"


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A 30-task bench, validated in the sandbox, published next to an ordinary task release."""
    root = tmp_path_factory.mktemp("data")
    specs, _ = generate(GenerateRequest(n=12, seed=4))
    task_release = publish_release(
        release_tables(specs, validate_tasks(specs, runtime="none")),
        data_root=root,
        run_id="train-1",
        parent=None,
        config={},
    )
    return root, task_release, build_bench(N, data_root=root)


def test_the_plan_spreads_over_groups_capabilities_and_difficulties():
    plan = bench_plan(300)
    assert plan.n == 300 and sum(r.count for r in plan.rows) == 300
    by = {key: Counter() for key in ("group", "capability", "difficulty", "family")}
    for row in plan.rows:
        by["group"][row.reason.split(": ")[1]] += row.count
        by["capability"][row.capability] += row.count
        by["difficulty"][row.difficulty] += row.count
        by["family"][row.family] += row.count
    assert by["group"] == {g: 100 for g in GROUPS}
    assert by["difficulty"] == {d: 60 for d in range(1, 6)}
    general = [c for c in by["capability"] if c not in ("multi_step", "multi_turn")]
    assert (
        len(general) == 7 and max(by["capability"][c] for c in general) - min(by["capability"][c] for c in general) <= 1
    )
    assert set(by["family"]) == set(FAMILIES.names())  # every family is in the default bench
    # seeds: the reserved range, one block per (family, difficulty) without overlaps
    assert all(
        RESERVED_SEED_BASE <= r.seed_start and r.seed_start + r.count <= RESERVED_SEED_BASE + SEED_STRIDE
        for r in plan.rows
    )
    seeds = [(r.family, r.difficulty, s) for r in plan.rows for s in r.seeds]
    assert len(seeds) == len(set(seeds))
    assert bench_plan(300) == plan
    assert bench_plan(300, seed=1).rows[0].seed_start == RESERVED_SEED_BASE + SEED_STRIDE


def test_a_small_plan_still_covers_every_difficulty_and_group():
    plan = bench_plan(N)
    assert Counter(r.difficulty for r in plan.rows for _ in r.seeds) == {d: 6 for d in range(1, 6)}
    assert Counter(r.reason for r in plan.rows for _ in r.seeds) == {f"{SUITE_NAME}: {g}": 10 for g in GROUPS}
    only = bench_plan(8, families=["mail_triage", "multi_turn_booking"])
    assert {r.family for r in only.rows} == {"mail_triage", "multi_turn_booking"} and only.n == 8
    with pytest.raises(CoworkEnvError, match="between 1 and"):
        bench_plan(0)
    with pytest.raises(CoworkEnvError, match="did you mean"):
        bench_plan(5, families=["mail_triag"])


def test_the_bench_is_a_benchmark_release_of_held_out_tasks(built):
    root, task_release, build = built
    assert (build.planned, build.generated, build.valid, build.invalid, build.generation_rejections) == (N, N, N, 0, 0)
    manifest = read_manifest(root, build.release_id)
    assert manifest.kind == "benchmark" and manifest.config["suite"] == SUITE_NAME and manifest.config["n"] == N
    assert latest_release(root) == task_release.release_id  # training still reads the task release
    assert manifest.row_counts["tasks"] == manifest.row_counts["rl"] == N and manifest.row_counts["sft"] == 0
    assert read_table(root, build.release_id, "validations", columns=["valid"]).column("valid").to_pylist() == [
        True
    ] * (N * len(BATTERY_CODES))
    suite = build.suite
    assert suite.kind == "benchmark" and suite.source == build.release_id and len(suite.tasks) == N
    assert suite.composition()["group"] == {g: 10 for g in GROUPS}
    for task in suite.tasks:
        assert task.meta.seed >= RESERVED_SEED_BASE
        fam = FAMILIES.get(task.family)
        trained = fam.build(Draft(fam, task.meta.seed, task.difficulty))  # the train split's wording of the same draft
        assert task.instruction != trained.instruction
        assert task == fam.build(Draft(fam, task.meta.seed, task.difficulty, "bench"))


def test_the_build_is_deterministic(built, tmp_path):
    root, _, build = built
    again = build_bench(N, data_root=root, runtime="none")  # same release: a no-op republish, not a conflict
    assert again.release_id == build.release_id and again.suite == build.suite
    elsewhere = build_bench(N, data_root=tmp_path, runtime="none")
    assert (
        read_manifest(tmp_path, elsewhere.release_id).content_hashes
        == read_manifest(root, build.release_id).content_hashes
    )


def test_invalid_tasks_stay_out_of_the_suite(tmp_path, monkeypatch):
    """The real battery rejects a task whose oracle only answers; the suite keeps the others and counts it."""
    real = suite_module.validate_tasks

    def with_one_broken(specs, **kwargs):
        specs = list(specs)
        specs[0] = specs[0].model_copy(update={"solution": specs[0].solution[-1:]})
        return real(specs, **kwargs)

    monkeypatch.setattr(suite_module, "validate_tasks", with_one_broken)
    build = build_bench(10, data_root=tmp_path, runtime="none")
    assert (build.generated, build.valid, build.invalid) == (10, 9, 1)
    assert "oracle_scores_1" in build.invalid_by_code
    first = bench_plan(10).rows[0]
    assert all(t.meta.seed != first.seed_start or t.family != first.family for t in build.suite.tasks)
    assert read_manifest(tmp_path, build.release_id).row_counts["tasks"] == 9
    assert (
        len(
            set(
                read_table(tmp_path, build.release_id, "validations", columns=["task_id"]).column("task_id").to_pylist()
            )
        )
        == 10
    )


def test_any_release_loads_as_a_suite(built):
    root, task_release, build = built
    assert load_suite(build.release_id, data_root=root) == build.suite
    tasks = load_suite("latest", data_root=root)
    assert tasks.kind == "tasks" and tasks.source == task_release.release_id and tasks.name == task_release.release_id
    assert len(tasks.tasks) == 12 and tasks.ids == sorted(tasks.ids)
    with pytest.raises(CoworkEnvError, match="no complete release 'r-nothing'"):
        load_suite("r-nothing", data_root=root)


def test_a_jsonl_file_loads_as_a_suite(built, tmp_path):
    tasks = built[2].suite.tasks[:4]
    path = tmp_path / "mine.jsonl"
    path.write_text("\n".join(t.to_json() for t in reversed(tasks)) + "\n\n", encoding="utf-8")
    suite = load_suite(path)
    assert (suite.name, suite.kind, suite.source) == ("mine", "file", str(path))
    assert suite.tasks == tuple(reversed(tasks))  # a file's order is kept


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ([TASK, "{not json"], "bad.jsonl:2: not valid JSON"),
        ([TASK, "[1, 2]"], "bad.jsonl:2: expected a JSON object, got list"),
        (["", WRONG], "bad.jsonl:2: difficulty"),
        ([TASK, "", TASK], "bad.jsonl:3: task id '.*' appears twice \\(first on line 1\\)"),
        (["", "  "], "bad.jsonl: no tasks"),
    ],
)
def test_bad_suite_files_fail_in_one_line_naming_the_line(built, tmp_path, lines, message):
    task = built[2].suite.tasks[0]
    wrong = json.dumps(json.loads(task.to_json()) | {"difficulty": 9})
    text = "\n".join({TASK: task.to_json(), WRONG: wrong}.get(line, line) for line in lines)
    path = tmp_path / "bad.jsonl"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(CoworkEnvError, match=message) as info:
        load_suite(path)
    assert "\n" not in str(info.value)


def test_suite_files_are_capped(built, tmp_path, monkeypatch):
    task = built[2].suite.tasks[0]
    path = tmp_path / "big.jsonl"
    path.write_text(task.to_json() + "\n", encoding="utf-8")
    monkeypatch.setattr(suite_module, "CAPS", InputCaps(spec_chars=100))
    with pytest.raises(CoworkEnvError, match=r"big.jsonl:1: \d+ characters, over the cap spec_chars \(100\)"):
        load_suite(path)
    monkeypatch.setattr(suite_module, "CAPS", InputCaps(tasks_per_run=1))
    two = built[2].suite.tasks[1]
    path.write_text(task.to_json() + "\n" + two.to_json() + "\n", encoding="utf-8")
    with pytest.raises(CoworkEnvError, match="big.jsonl:2: more than 1 tasks"):
        load_suite(path)


def test_other_suite_references_fail_clearly(tmp_path):
    (tmp_path / "tasks.json").write_text("{}", encoding="utf-8")
    with pytest.raises(CoworkEnvError, match="must be a .jsonl file"):
        load_suite(tmp_path / "tasks.json")
    with pytest.raises(CoworkEnvError, match="missing.jsonl: no such file"):
        load_suite(tmp_path / "missing.jsonl")
    with pytest.raises(CoworkEnvError, match="invalid release id"):
        load_suite("not a release/id", data_root=tmp_path)
