"""The stages after validation stream their task sets in batches (docs/design/pipeline.md, "Bounded memory"): whatever
the batch size, they write the same files and publish the same release, byte for byte."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from coworkenv.data import publisher, serialize
from coworkenv.data.publisher import publish_release
from coworkenv.data.schemas import TABLES
from coworkenv.pipeline import release_tables as build_module
from coworkenv.pipeline.config import SynthesisConfig
from coworkenv.pipeline.release_tables import gate_tables, staged_table_files, staged_tables
from coworkenv.pipeline.rundir import BATCH, RunDir
from coworkenv.pipeline.synthesis import GATES
from coworkenv.pipeline.synthesis.build import build_tables
from coworkenv.pipeline.synthesis.generate import generate_shard, import_tasks
from coworkenv.pipeline.synthesis.plan import plan_run, start_run
from coworkenv.pipeline.synthesis.publish import publish
from coworkenv.pipeline.synthesis.repair import repair_run
from coworkenv.pipeline.synthesis.rollout import rollout_run
from coworkenv.pipeline.synthesis.validate import validate_shard
from tests.support import EXAMPLES, ROOT

CONFIG = SynthesisConfig(n=10, seed=3, shards=2, runtime="none", repair_rounds=2)
BROKEN = ROOT / "tests" / "repair" / "corpus" / "01_wrong_expected_number.json"
RUN_FILES = (
    "repaired/tasks.jsonl",
    "repaired/validations.jsonl",
    "repaired/attempts.jsonl",
    "repaired/metrics.json",
    "rollouts/trajectories.jsonl",
)


@pytest.fixture(scope="module")
def validated_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A validated run of the example tasks and one broken task (so that repair has work): its data root. Their
    families are hand-written ones, which the `validated` gate refuses: this run is published without the gates."""
    root = tmp_path_factory.mktemp("validated")
    run = RunDir.open("s", root)
    start_run(run, CONFIG)
    import_tasks(run, [EXAMPLES, BROKEN], shards=3)
    for shard in run.shard_ids():
        validate_shard(run, shard)
    return root


@pytest.fixture(scope="module")
def generated_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A validated run of generated tasks (every one valid, every family registered): it passes the gates."""
    root = tmp_path_factory.mktemp("generated")
    run = RunDir.open("s", root)
    for shard in plan_run(run, CONFIG.model_copy(update={"n": 12})):
        generate_shard(run, shard)
    for shard in run.shard_ids():
        validate_shard(run, shard)
    return root


def _stages(validated_root: Path, root: Path, batch_size: int, gated: bool = False) -> dict[str, Any]:
    """Repair, rollout, build, gate (when `gated`) and publish a copy of a validated run in `batch_size` batches;
    what they made."""
    shutil.copytree(validated_root, root)
    run = RunDir.open("s", root)
    results = {
        "repair": repair_run(run, batch_size=batch_size),
        "rollout": rollout_run(run, batch_size=batch_size),
        "build": build_tables(run, batch_size=batch_size),
    }
    if gated:
        gates = gate_tables(run, GATES, batch_size=batch_size)
        results["gate"] = {stage: {k: v for k, v in stats.items() if k != "seconds"} for stage, stats in gates.items()}
        manifest = publish(run)
    else:
        manifest = publish_release(staged_table_files(run), data_root=root, run_id="s", parent=None, config={})
    release = root / "releases" / manifest.release_id
    return {
        "results": results,
        "files": {name: run.file(name).read_bytes() for name in RUN_FILES},
        "staged": {name: pq.read_table(run.file("tables", f"{name}.parquet")) for name in TABLES},
        "manifest": manifest.model_dump(
            mode="json", include={"release_id", "row_counts", "content_hashes", "files", "schema_fingerprints"}
        ),
        "release": {str(p.relative_to(release)): p.read_bytes() for p in sorted(release.rglob("*.parquet"))},
    }


@pytest.mark.parametrize("which", ["repaired", "gated"])
def test_every_batch_size_gives_the_same_files_and_release(
    which: str, validated_run: Path, generated_run: Path, tmp_path: Path
) -> None:
    start, gated = (validated_run, False) if which == "repaired" else (generated_run, True)
    made = {size: _stages(start, tmp_path / f"b{size}", size, gated) for size in (1, 7, BATCH)}
    reference = made[BATCH]
    if gated:
        assert (
            set(reference["results"]["gate"]) == {"validated", "rollouts"}
            and reference["manifest"]["row_counts"]["tasks"] == 12
        )
    else:
        assert reference["results"]["repair"]["repaired"] == 1 and reference["manifest"]["row_counts"]["repairs"] >= 1
        assert reference["manifest"]["row_counts"]["tasks"] == len(list(EXAMPLES.glob("*.json"))) + 1
    for size in (1, 7):
        assert made[size]["results"] == reference["results"], size
        assert made[size]["files"] == reference["files"], size
        for name, table in reference["staged"].items():
            assert made[size]["staged"][name].equals(table), (size, name)
        assert made[size]["manifest"] == reference["manifest"], size
        assert made[size]["release"] == reference["release"], size


def test_a_release_streamed_from_staged_files_is_the_release_of_the_whole_tables(
    generated_run: Path, tmp_path: Path
) -> None:
    """The same bytes whether publish streams the staged files or is handed the tables whole (as the library's other
    publishers do)."""
    streamed = _stages(generated_run, tmp_path / "streamed", 3, gated=True)
    tables = staged_tables(RunDir.open("s", tmp_path / "streamed"))
    whole = publish_release(tables, data_root=tmp_path / "whole", run_id="s", parent=None, config={})
    assert whole.model_dump(mode="json", include=set(streamed["manifest"])) == streamed["manifest"]


def _published_streamed_and_whole(
    validated_run: Path, tmp_path: Path, batch_size: int
) -> tuple[dict[str, Path], Any, Any]:
    """The run rolled out and built in batches, then published from its staged files (under `a`) and from the whole
    tables (under `b`): the two releases must be the same files."""
    root = tmp_path / "run"
    shutil.copytree(validated_run, root)
    run = RunDir.open("s", root)
    rollout_run(run)
    build_tables(run, batch_size=batch_size)
    files = {name: run.file("tables", f"{name}.parquet") for name in TABLES}
    streamed = publish_release(files, data_root=tmp_path / "a", run_id="s", parent=None, config={})
    whole = publish_release(staged_tables(run), data_root=tmp_path / "b", run_id="s", parent=None, config={})
    assert streamed.content_hashes == whole.content_hashes and streamed.files == whole.files
    return files, streamed, whole


def test_row_groups_and_files_are_cut_alike_from_whole_and_streamed_tables(
    validated_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(serialize, "ROW_GROUP_SIZE", 3)
    monkeypatch.setattr(serialize, "SOURCE_BATCH", 2)
    monkeypatch.setattr(publisher, "MAX_ROWS_PER_FILE", 8)
    files, streamed, whole = _published_streamed_and_whole(validated_run, tmp_path, batch_size=5)
    validations = streamed.files["validations"]
    assert len(validations) > 1 and all(f.rows == 8 for f in validations[:-1])
    first = pq.ParquetFile(tmp_path / "a" / "releases" / streamed.release_id / validations[0].path)
    assert [first.metadata.row_group(i).num_rows for i in range(first.num_row_groups)] == [3, 3, 2]
    # publishing the same tables again, streamed or whole, is the same release
    assert (
        publish_release(files, data_root=tmp_path / "b", run_id="s", parent=None, config={}).content_hashes
        == whole.content_hashes
    )


def test_wide_rows_end_a_row_group_by_bytes_alike_from_whole_and_streamed_tables(
    validated_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A row group ends where its rows' text would pass ROW_GROUP_BYTES (at least one row a group), at the same rows
    however the source is chunked."""
    monkeypatch.setattr(serialize, "ROW_GROUP_BYTES", 9_000)
    monkeypatch.setattr(serialize, "SOURCE_BATCH", 3)
    _, streamed, _ = _published_streamed_and_whole(validated_run, tmp_path, batch_size=2)
    release = tmp_path / "a" / "releases" / streamed.release_id
    for written in streamed.files["tasks"]:
        parquet = pq.ParquetFile(release / written.path)
        groups = [parquet.read_row_group(i) for i in range(parquet.num_row_groups)]
        sizes = [int(serialize._text_bytes(g).sum()) for g in groups]
        assert all(s <= 9_000 or g.num_rows == 1 for s, g in zip(sizes, groups, strict=True)), sizes
        # each group but the file's last ended because its next row would not fit
        firsts = [int(serialize._text_bytes(g.slice(0, 1))[0]) for g in groups[1:]]
        assert all(s + nxt > 9_000 for s, nxt in zip(sizes, firsts, strict=False)), (sizes, firsts)
    assert sum(pq.ParquetFile(release / f.path).num_row_groups for f in streamed.files["tasks"]) > len(
        streamed.files["tasks"]
    )


@pytest.mark.parametrize("batch_bytes", [1, 8 * 1024 * 1024])
def test_build_cuts_row_groups_by_bytes_not_by_batch(
    validated_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, batch_bytes: int
) -> None:
    """Built one task at a time, a staged table is still one row group while its rows hold less than BATCH_BYTES; past
    it, every batch's rows end a group."""
    monkeypatch.setattr(build_module, "BATCH_BYTES", batch_bytes)
    shutil.copytree(validated_run, tmp_path / "run")
    run = RunDir.open("s", tmp_path / "run")
    rows = build_tables(run, batch_size=1)
    files = staged_table_files(run)
    groups = {name: pq.ParquetFile(path).num_row_groups for name, path in files.items()}
    verdicts = len(set(pq.read_table(files["validations"], columns=["task_id"])["task_id"].to_pylist()))
    writes = {"tasks": rows["tasks"], "rl": rows["tasks"], "validations": verdicts}  # one per valid task / per verdict
    assert rows["tasks"] > 1 and verdicts > rows["tasks"]  # the broken task has a verdict, and no task row
    for name, n in writes.items():
        assert groups[name] == (1 if batch_bytes > 1 else n), (name, groups)


def test_metrics_of_a_batched_repair_count_every_batch(validated_run: Path, tmp_path: Path) -> None:
    root = tmp_path / "run"
    shutil.copytree(validated_run, root)
    run = RunDir.open("s", root)
    result = repair_run(run, batch_size=1)
    assert (
        result["metrics"]["initially_invalid"] == 1
        and json.loads(run.file("repaired", "metrics.json").read_text()) == result["metrics"]
    )


@pytest.mark.parametrize("cut", ["verdict", "task"])
def test_a_shard_with_more_tasks_than_verdicts_or_fewer_is_refused_with_both_counts(
    validated_run: Path, tmp_path: Path, cut: str
) -> None:
    from coworkenv.errors import CoworkEnvError
    from coworkenv.pipeline.rundir import validated

    shutil.copytree(validated_run, tmp_path / "run")
    run = RunDir.open("s", tmp_path / "run")
    path = run.shard_file(
        "validated" if cut == "verdict" else "generated", 0, "validations" if cut == "verdict" else "tasks"
    )
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:-1]))
    n = len(lines)
    tasks, verdicts = (n, n - 1) if cut == "verdict" else (n - 1, n)
    with pytest.raises(CoworkEnvError, match=f"shard 0 has {tasks} tasks but {verdicts} verdicts: validate it first"):
        list(validated(run))
