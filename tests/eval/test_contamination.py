"""The contamination check: exact workspace and solution matches, near-duplicate instructions (MinHash LSH, verified by
the exact Jaccard similarity), the report and `ensure_clean`; training tasks read from task releases."""

from __future__ import annotations

import pytest

from coworkenv.data.build import release_tables
from coworkenv.data.publisher import publish_release
from coworkenv.errors import CoworkEnvError
from coworkenv.eval.contamination import (
    ContaminationError,
    check_contamination,
    ensure_clean,
    jaccard,
    shingles,
    training_tasks,
)
from coworkenv.eval.suite import build_bench
from coworkenv.spec.task import TaskSpec
from coworkenv.synth.generate import GenerateRequest, generate
from coworkenv.validate.batch import validate_tasks

N = 30


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """A 30-task bench and a normal training release of the same families (60 tasks), both published."""
    root = tmp_path_factory.mktemp("data")
    bench = build_bench(N, data_root=root, runtime="none")
    specs, _ = generate(GenerateRequest(n=60, seed=0))
    train = publish_release(
        release_tables(specs, validate_tasks(specs, runtime="none")),
        data_root=root,
        run_id="train-0",
        parent=None,
        config={},
    )
    return root, bench, train


def edited(spec: TaskSpec, **changes) -> TaskSpec:
    """A new spec (validated, as a file or release gives it) with some fields changed (given as JSON data)."""
    return TaskSpec.model_validate(spec.model_dump(mode="json", by_alias=True) | changes)


def most_similar(suite: list[TaskSpec], train: list[TaskSpec]) -> float:
    """The highest instruction similarity over every pair (what LSH approximates)."""
    theirs = [shingles(t.instruction) for t in train]
    return max(jaccard(shingles(s.instruction), other) for s in suite for other in theirs)


def test_the_bench_is_clean_against_a_training_release(data):
    root, bench, train = data
    trained = training_tasks(root, [train.release_id])
    assert len(trained) == 60
    report = check_contamination(bench.suite.tasks, trained)
    assert report.clean and report.pairs == () and report.contaminated_ids == () and report.share == 0.0
    assert report.by_kind() == {"workspace": 0, "solution": 0, "instruction": 0}
    assert (report.suite_tasks, report.training_tasks, report.threshold, report.num_perm) == (N, 60, 0.8, 128)
    closest = most_similar(list(bench.suite.tasks), trained)
    assert report.max_similarity <= closest < report.threshold, (
        closest
    )  # held-out wording: far from every training task
    assert ensure_clean(report) is report


def test_copied_training_tasks_are_caught(data):
    root, bench, _ = data
    trained = training_tasks(root, ["latest"])
    copied = trained[:5]
    report = check_contamination([*bench.suite.tasks[:20], *copied], trained)
    assert report.contaminated_ids == tuple(t.id for t in copied)
    assert report.share == pytest.approx(5 / 25) and not report.clean
    for task in copied:
        found = {(p.kind, p.similarity) for p in report.pairs if p.suite_id == task.id and p.train_id == task.id}
        assert found == {("workspace", 1.0), ("solution", 1.0), ("instruction", 1.0)}
    with pytest.raises(ContaminationError) as info:
        ensure_clean(report)
    message = str(info.value)
    assert message.startswith(
        "contaminated suite: 5 of 25 tasks (20.0%) match training tasks, above the allowed 0.0%: "
    )
    assert f"{copied[0].id} ~ {copied[0].id} (workspace)" in message and "more pairs" in message and "\n" not in message
    # the first five pairs, the instruction's with its similarity, and how many more there are
    assert message.count(" ~ ") == 5 and f"{copied[0].id} ~ {copied[0].id} (instruction 1.00); " in message
    assert message.endswith(f" (and {len(report.pairs) + report.pairs_left_off - 5} more pairs)")
    assert report.by_kind() == {"workspace": 5, "solution": 5, "instruction": 5}
    with pytest.raises(ContaminationError) as info:
        ensure_clean(report, show=len(report.pairs))
    assert str(info.value).count(" ~ ") == len(report.pairs) and str(info.value).endswith(" (instruction 1.00)")
    with pytest.raises(ContaminationError, match=r"\) \(and 1 more pairs\)$"):
        ensure_clean(report, show=len(report.pairs) - 1)
    with pytest.raises(
        ContaminationError, match=rf" \(and {len(report.pairs) + 3 - 5} more pairs\)$"
    ):  # matches past MAX_PAIRS count too
        ensure_clean(report.model_copy(update={"pairs_left_off": 3}))
    assert ensure_clean(report, max_share=0.2) is report
    assert check_contamination([*bench.suite.tasks[:20], *copied], trained, max_share=0.25).clean


def test_each_kind_of_match_is_found_alone(data):
    root, bench, _ = data
    trained = training_tasks(root, ["latest"])
    mine, theirs = bench.suite.tasks[0], trained[3]
    theirs_json = theirs.model_dump(mode="json", by_alias=True)
    same_workspace = edited(mine, id="ws-copy", workspace=theirs_json["workspace"])
    same_solution = edited(mine, id="sol-copy", solution=theirs_json["solution"])
    expected = [("ws-copy", theirs.id, "workspace"), ("sol-copy", theirs.id, "solution")]
    report = check_contamination([same_workspace, same_solution], trained)
    assert [(p.suite_id, p.train_id, p.kind) for p in report.pairs] == expected
    # a copy that changed the workspace after its hash was cached is still seen as it is now
    stale = mine.model_copy(update={"id": "ws-copy", "workspace": theirs.workspace})
    assert mine.initial_state_hash and check_contamination([stale], trained).pairs[0].kind == "workspace"


def test_a_paraphrase_with_a_couple_of_words_changed_is_a_near_duplicate(data):
    root, bench, _ = data
    trained = training_tasks(root, ["latest"])
    theirs = max(trained, key=lambda t: len(t.instruction.split()))
    words = theirs.instruction.split()
    assert len(words) >= 60
    words[5], words[-8] = "kindly", "afterwards"
    paraphrase = edited(bench.suite.tasks[0], id="paraphrase", instruction=" ".join(words))
    report = check_contamination([paraphrase, *bench.suite.tasks[1:]], trained)
    assert report.contaminated_ids == ("paraphrase",)
    [pair] = report.pairs
    assert (pair.train_id, pair.kind) == (theirs.id, "instruction") and 0.8 <= pair.similarity < 1.0
    assert pair.similarity == round(jaccard(shingles(paraphrase.instruction), shingles(theirs.instruction)), 4)
    assert report.max_similarity == pair.similarity
    # the same pair under a stricter threshold is not a near-duplicate
    assert check_contamination([paraphrase], trained, threshold=0.99).pairs == ()


def test_the_report_is_deterministic(data):
    root, bench, _ = data
    trained = training_tasks(root, ["latest"])
    suite = [*bench.suite.tasks, *trained[:3]]
    assert check_contamination(suite, trained) == check_contamination(suite, trained)


def test_shingles_and_similarity():
    assert shingles("Forward the invoices, please!") == {"forward the invoices", "the invoices please"}
    assert shingles("Hi there") == {"hi there"} and shingles("") == frozenset()
    assert jaccard(shingles("a b c d"), shingles("a b c e")) == pytest.approx(1 / 3)
    # two empty instructions are the same; an empty one is like no other
    assert jaccard(frozenset(), frozenset()) == 1.0
    assert jaccard(frozenset(), shingles("a b c")) == jaccard(shingles("a b c"), frozenset()) == 0.0


def test_bad_arguments_and_releases(data):
    root, bench, _ = data
    with pytest.raises(CoworkEnvError, match="threshold must be in"):
        check_contamination([], [], threshold=0)
    with pytest.raises(CoworkEnvError, match="share must be in"):
        check_contamination([], [], max_share=2)
    with pytest.raises(CoworkEnvError, match="is a benchmark release, not a task release"):
        training_tasks(root, [bench.release_id])
    with pytest.raises(CoworkEnvError, match="non-empty list"):
        training_tasks(root, [])
    empty = check_contamination([], [])
    assert empty.clean and empty.share == 0.0


@pytest.mark.slow
def test_the_default_bench_is_clean_against_a_300_task_training_release(tmp_path):
    bench = build_bench(data_root=tmp_path, runtime="none")
    specs, _ = generate(GenerateRequest(n=300, seed=0))
    train = publish_release(
        release_tables(specs, validate_tasks(specs, runtime="none")),
        data_root=tmp_path,
        run_id="train-300",
        parent=None,
        config={},
    )
    trained = training_tasks(tmp_path, [train.release_id])
    report = ensure_clean(check_contamination(bench.suite.tasks, trained))
    assert (report.suite_tasks, report.training_tasks, report.pairs) == (300, 300, ())
    assert report.max_similarity <= most_similar(list(bench.suite.tasks), trained) < 0.6  # measured: 0.47
