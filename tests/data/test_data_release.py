"""Publishing and reading releases: round trip, manifest, determinism, conflicts, partitioning, fsspec roots."""

from __future__ import annotations

import filecmp
import hashlib
import json
import os
import time
import uuid
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import coworkenv.data.publisher as publisher
import coworkenv.data.root as rel
from coworkenv.data.layout import LATEST_FILE, LOCK_FILE, FileEntry, ReleaseConflict, content_hash_of, release_id_for
from coworkenv.data.publisher import clean_stale_tmp, publish_release
from coworkenv.data.reader import (
    latest_release,
    list_releases,
    read_manifest,
    read_release,
    read_table,
    table_files,
    table_path,
    verify_release,
)
from coworkenv.data.schemas import PARTITIONS, TABLES, fingerprint
from coworkenv.errors import CoworkEnvError
from tests.support.releases import sorted_rows


def publish(root, tables, run_id="run-1", parent=None, config=None):
    return publish_release(tables, data_root=str(root), run_id=run_id, parent=parent, config=config or {"n": 1})


def files_under(path: Path) -> list[str]:
    return sorted(str(p.relative_to(path)) for p in path.rglob("*") if p.is_file())


def test_release_id_is_a_pure_readable_function_of_the_run_id():
    a = release_id_for("manual__2026-12-04T08:30:00+00:00")
    assert a == release_id_for("manual__2026-12-04T08:30:00+00:00")
    assert a.startswith("r-manual-2026-12-04t08-30-00-00-00-") and len(a.rsplit("-", 1)[1]) == 8
    assert release_id_for("Run 1") != release_id_for("run-1")  # same slug, different hash
    assert release_id_for("???").startswith("r-") and len(release_id_for("x" * 500)) < 70
    with pytest.raises(CoworkEnvError):
        release_id_for(" ")


def test_round_trip_and_manifest(tmp_path, tables):
    manifest = publish(tmp_path, tables, parent="r-previous-00000000", config={"seed": 3, "families": ["a"]})
    assert latest_release(tmp_path) == manifest.release_id == release_id_for("run-1")
    assert (tmp_path / "releases" / "LATEST").read_text() == manifest.release_id + "\n"
    stored = json.loads((tmp_path / "releases" / manifest.release_id / "manifest.json").read_text())
    assert stored["release_id"] == manifest.release_id and stored["run_id"] == "run-1"
    assert stored["parent"] == "r-previous-00000000" and stored["config"] == {"families": ["a"], "seed": 3}
    assert stored["row_counts"] == {n: t.num_rows for n, t in tables.items()}
    assert stored["schema_fingerprints"] == {n: fingerprint(s) for n, s in TABLES.items()}
    assert stored["code_version"].startswith("0.") and "/" not in stored["code_version"]
    assert read_manifest(tmp_path, "latest") == read_manifest(tmp_path, manifest.release_id) == manifest
    for name, table in tables.items():
        back = read_table(tmp_path, "latest", name)
        assert back.schema.equals(TABLES[name], check_metadata=True), name
        assert sorted_rows(back) == sorted_rows(table), name
    assert verify_release(tmp_path) == []
    assert [m.release_id for m in list_releases(tmp_path)] == [manifest.release_id]


def test_every_table_has_a_file_even_when_empty(tmp_path, tables):
    manifest = publish(tmp_path, {"tasks": tables["tasks"]})
    base = tmp_path / "releases" / manifest.release_id
    for name in TABLES:
        files = list((base / name).rglob("*.parquet"))
        assert files, name
        if name != "tasks":
            assert [f.relative_to(base) for f in files] == [Path(name) / "part-0.parquet"]
            assert read_table(tmp_path, "latest", name).num_rows == 0
    assert manifest.row_counts["sft"] == 0
    # readers find the schema of an empty table in its file
    empty = duckdb.sql(f"DESCRIBE SELECT * FROM read_parquet('{base}/sft/**/*.parquet')").fetchall()
    assert [r[0] for r in empty] == TABLES["sft"].names


def test_partitioned_by_family(tmp_path, tables):
    manifest = publish(tmp_path, tables)
    base = tmp_path / "releases" / manifest.release_id
    families = sorted(set(tables["tasks"].column("family").to_pylist()))
    assert len(families) > 2
    for name, keys in PARTITIONS.items():
        assert keys == ["family"]
        assert sorted(p.name for p in (base / name).iterdir()) == [f"family={f}" for f in families]
        assert all((base / name / f"family={f}" / "part-0.parquet").is_file() for f in families)
    # the manifest lists the files in read order; a per-family read touches only that family's rows
    assert [e.path for e in manifest.files["tasks"]] == [f"tasks/family={f}/part-0.parquet" for f in families]
    one = read_table(tmp_path, "latest", "tasks", filters=[("family", "=", families[0])])
    assert set(one.column("family").to_pylist()) == {families[0]}
    assert one.num_rows == tables["tasks"].column("family").to_pylist().count(families[0])
    # DuckDB: hive partition pruning on the directory names, or the column inside the files
    path = table_path(tmp_path, "latest", "trajectories")
    query = "SELECT family, count(*) FROM read_parquet('{}/**/*.parquet'{}) GROUP BY ALL ORDER BY 1"
    by_dir = duckdb.sql(query.format(path, ", hive_partitioning = true")).fetchall()
    by_col = duckdb.sql(query.format(path, "")).fetchall()
    assert by_dir == by_col and sum(c for _, c in by_dir) == tables["trajectories"].num_rows


def test_large_partitions_split_into_files(tmp_path, tables, monkeypatch):
    monkeypatch.setattr(publisher, "MAX_ROWS_PER_FILE", 4)
    manifest = publish(tmp_path, tables)
    assert len(manifest.files["validations"]) == -(-tables["validations"].num_rows // 4)
    assert read_table(tmp_path, "latest", "validations").equals(tables["validations"])


def test_same_run_id_gives_the_same_release_byte_for_byte(tmp_path, tables):
    a = publish(tmp_path / "a", tables)
    b = publish(tmp_path / "b", tables)
    assert a.release_id == b.release_id and a.content_hashes == b.content_hashes and a.files == b.files
    da, db = tmp_path / "a" / "releases" / a.release_id, tmp_path / "b" / "releases" / b.release_id
    parquet = [f for f in files_under(da) if f.endswith(".parquet")]
    assert parquet == [f for f in files_under(db) if f.endswith(".parquet")]
    _, mismatch, errors = filecmp.cmpfiles(da, db, parquet, shallow=False)
    assert not mismatch and not errors


def test_rebuilding_a_run_from_scratch_gives_the_same_release(tmp_path, tables, specs, validations):
    """The whole chain is deterministic: generate → validate → oracle rollouts → tables → Parquet bytes."""
    from coworkenv.data.build import release_tables
    from coworkenv.rollout import rollout_rows
    from coworkenv.synth.generate import GenerateRequest, generate

    first = publish(tmp_path / "a", tables)
    again, _ = generate(GenerateRequest(n=len(specs), seed=11))
    rebuilt = release_tables(
        again, validations, repairs=tables["repairs"].to_pylist(), trajectories=rollout_rows(again)
    )
    second = publish(tmp_path / "b", rebuilt)
    assert second.release_id == first.release_id and second.content_hashes == first.content_hashes
    assert publish(tmp_path / "a", rebuilt) == first  # and publishing it over the first run is a no-op


def test_concurrent_publishers_of_one_run_make_one_release(tmp_path, tables):
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(4) as pool:
        manifests = list(pool.map(lambda _: publish(tmp_path, tables), range(4)))
    assert len({m.release_id for m in manifests}) == 1
    assert [p.name for p in (tmp_path / "releases").iterdir() if p.name not in (LATEST_FILE, LOCK_FILE)] == [
        manifests[0].release_id
    ]
    assert latest_release(tmp_path) == manifests[0].release_id and verify_release(tmp_path) == []


def test_republishing_a_run_is_a_no_op(tmp_path, tables):
    first = publish(tmp_path, tables)
    before = {p: p.stat().st_mtime_ns for p in (tmp_path / "releases").rglob("*") if p.is_file()}
    again = publish(tmp_path, tables, parent=first.release_id, config={"other": True})  # a retry sees itself as LATEST
    assert again == first  # the stored manifest, unchanged
    assert [m.release_id for m in list_releases(tmp_path)] == [first.release_id]
    after = {p: p.stat().st_mtime_ns for p in (tmp_path / "releases").rglob("*") if p.is_file()}
    assert after == before


def test_republishing_with_different_rows_is_a_conflict(tmp_path, tables):
    publish(tmp_path, tables)
    with pytest.raises(ReleaseConflict, match="different rows in tasks"):
        publish(tmp_path, {**tables, "tasks": tables["tasks"].slice(1)})
    assert len(list_releases(tmp_path)) == 1


def test_republish_compares_rows_when_bytes_differ(tmp_path, tables):
    """Parquet bytes depend on the writer version; equal rows under other bytes are still the same release."""
    first = publish(tmp_path, tables)
    path = tmp_path / "releases" / first.release_id / "manifest.json"
    data = json.loads(path.read_text())
    entry = data["files"]["sft"][0]  # other bytes for the same rows, as another writer version would make them
    part = path.parent / entry["path"]
    pq.write_table(pq.read_table(part), part, compression="gzip")
    entry.update(bytes=part.stat().st_size, sha256=hashlib.sha256(part.read_bytes()).hexdigest())
    data["content_hashes"]["sft"] = content_hash_of([FileEntry(**e) for e in data["files"]["sft"]])
    path.write_text(json.dumps(data))
    assert publish(tmp_path, tables).release_id == first.release_id


def test_new_run_moves_latest_and_records_the_parent(tmp_path, tables):
    first = publish(tmp_path, tables)
    second = publish(tmp_path, {"tasks": tables["tasks"]}, run_id="run-2", parent=latest_release(tmp_path))
    assert latest_release(tmp_path) == second.release_id and second.parent == first.release_id
    assert [m.release_id for m in list_releases(tmp_path)] == [first.release_id, second.release_id]
    assert read_table(tmp_path, first.release_id, "sft").num_rows == tables["sft"].num_rows
    assert read_table(tmp_path, "latest", "sft").num_rows == 0
    # an old run republished does not take LATEST back
    assert publish(tmp_path, tables).release_id == first.release_id
    assert latest_release(tmp_path) == second.release_id


def test_invalid_tables_write_nothing(tmp_path, tables):
    bad = tables["tasks"].drop_columns(["spec_json"])
    with pytest.raises(CoworkEnvError, match="table tasks: missing columns spec_json"):
        publish(tmp_path, {**tables, "tasks": bad})
    with pytest.raises(CoworkEnvError, match="unknown table"):
        publish(tmp_path, {"nope": tables["tasks"]})
    with pytest.raises(CoworkEnvError, match="JSON"):
        publish(tmp_path, tables, config={"x": object()})
    assert not (tmp_path / "releases").exists() or list((tmp_path / "releases").iterdir()) == []


def test_reading_errors(tmp_path, tables):
    with pytest.raises(CoworkEnvError, match="no release published"):
        read_table(tmp_path, "latest", "tasks")
    publish(tmp_path, tables)
    with pytest.raises(CoworkEnvError, match="no complete release 'r-nope'"):
        read_manifest(tmp_path, "r-nope")
    with pytest.raises(CoworkEnvError, match="invalid release id"):
        read_manifest(tmp_path, "../etc")
    with pytest.raises(CoworkEnvError, match="unknown table"):
        read_table(tmp_path, "latest", "nope")


def test_carry_tables_forward(tmp_path, tables):
    first = publish(tmp_path, tables)
    carried = {**read_release(tmp_path, first.release_id), "eval_results": None}
    second = publish(tmp_path, carried, run_id="eval-run", parent=first.release_id)
    assert second.content_hashes["tasks"] == first.content_hashes["tasks"]  # same rows, same bytes
    assert second.row_counts == {**first.row_counts, "eval_results": 0}


def test_damaged_manifest_is_reported_not_listed(tmp_path, tables):
    m = publish(tmp_path, tables)
    (tmp_path / "releases" / m.release_id / "manifest.json").write_text("{}")
    assert list_releases(tmp_path) == []
    with pytest.raises(CoworkEnvError, match="unreadable manifest"):
        read_manifest(tmp_path, "latest")


def test_verify_detects_tampering(tmp_path, tables):
    m = publish(tmp_path, tables)
    victim = tmp_path / "releases" / m.release_id / m.files["rl"][0].path
    victim.write_bytes(victim.read_bytes()[:-1] + b"\0")
    assert verify_release(tmp_path) == [f"{m.files['rl'][0].path}: content differs from the manifest"]


def test_orphaned_temporaries_are_cleaned_whatever_their_age(tmp_path, tables):
    """Temporaries no writer holds (their writer died) go at the next publish, fresh ones too; see test_data_crash
    for a live writer's temporary surviving."""
    releases = tmp_path / "releases"
    old = releases / f".tmp-r-x-00000000-{int(time.time()) - 2 * 86400}-abcd1234"
    fresh = releases / f".tmp-r-y-00000000-{int(time.time())}-abcd1234"
    for d in (old, fresh):
        (d / "tasks").mkdir(parents=True)
    latest_tmp = releases / f".tmp-LATEST-{int(time.time())}-abcd1234"
    latest_tmp.write_text("r-y-00000000\n")
    publish(tmp_path, tables)
    assert not old.exists() and not fresh.exists() and not latest_tmp.exists()
    assert clean_stale_tmp(str(tmp_path)) == []
    assert [m.release_id for m in list_releases(tmp_path)] == [release_id_for("run-1")]
    assert sorted(p.name for p in releases.iterdir()) == sorted([LOCK_FILE, LATEST_FILE, release_id_for("run-1")])


def test_file_url_root(tmp_path, tables):
    url = f"file://{tmp_path}/store"
    m = publish(url, tables)
    assert (tmp_path / "store" / "releases" / m.release_id / "manifest.json").is_file()
    assert latest_release(url) == m.release_id
    assert sorted_rows(read_table(url, "latest", "rl")) == sorted_rows(tables["rl"])
    assert table_files(url, "latest", "sft") == [
        str(tmp_path / "store" / "releases" / m.release_id / "sft" / "part-0.parquet")
    ]


def test_memory_url_root(tables):
    """Non-local filesystems: the release is written in place with its manifest last; readers go through it."""
    url = f"memory://coworkenv-{uuid.uuid4().hex}/data"
    m = publish(url, tables)
    assert latest_release(url) == m.release_id
    for name, table in tables.items():
        assert sorted_rows(read_table(url, "latest", name)) == sorted_rows(table), name
    assert verify_release(url) == []
    assert table_files(url, "latest", "sft")[0].startswith("memory://")
    assert publish(url, tables) == m  # a rerun is a no-op there too


def test_crash_on_an_object_store_leaves_no_visible_release(tables, monkeypatch):
    url = f"memory://coworkenv-{uuid.uuid4().hex}/data"
    first = publish(url, {"tasks": tables["tasks"]}, run_id="base")

    def crash(stage):
        if stage == "table:sft":
            raise KeyboardInterrupt  # the writer dies half-way through

    monkeypatch.setattr(publisher, "_checkpoint", crash)
    with pytest.raises(KeyboardInterrupt):
        publish(url, tables, run_id="next")
    partial = rel.open_root(url)
    assert partial.fs.exists(partial.join("releases", release_id_for("next"), "tasks"))  # written in place …
    assert [m.release_id for m in list_releases(url)] == [first.release_id]  # … but not a release
    assert latest_release(url) == first.release_id
    with pytest.raises(CoworkEnvError, match="no complete release"):
        read_manifest(url, release_id_for("next"))
    monkeypatch.setattr(publisher, "_checkpoint", lambda stage: None)
    retry = publish(url, tables, run_id="next")
    assert latest_release(url) == retry.release_id and verify_release(url) == []


def test_default_data_root(monkeypatch, tmp_path):
    monkeypatch.setenv("COWORKENV_DATA_ROOT", str(tmp_path / "x"))
    assert rel.open_root().path == str(tmp_path / "x")
    monkeypatch.delenv("COWORKENV_DATA_ROOT")
    monkeypatch.chdir(tmp_path)
    assert rel.open_root().path == os.path.join(str(tmp_path), "data")


def test_a_writer_error_removes_its_temporary(tmp_path, tables, monkeypatch):
    def boom(stage):
        if stage == "manifest_written":
            raise OSError("disk full")

    monkeypatch.setattr(publisher, "_checkpoint", boom)
    with pytest.raises(OSError, match="disk full"):
        publish(tmp_path, tables)
    assert [p.name for p in (tmp_path / "releases").iterdir()] == [LOCK_FILE]


def test_reads_see_arrow_types(tmp_path, tables):
    publish(tmp_path, tables)
    sft = read_table(tmp_path, "latest", "sft", columns=["messages", "tools"])
    assert sft.column_names == ["messages", "tools"] and sft.schema.field("messages").type.equals(
        TABLES["sft"].field("messages").type
    )
    assert isinstance(sft.column("messages").type, pa.ListType)
