"""Release kinds: `tasks` (the default; the only kind that moves LATEST), `benchmark` and `eval` (read by id)."""

from __future__ import annotations

import json
import uuid

import pytest

from coworkenv.data.layout import RELEASE_KINDS, Manifest, ReleaseConflict
from coworkenv.data.publisher import publish_release
from coworkenv.data.reader import latest_release, list_releases, read_manifest, read_table
from coworkenv.errors import CoworkEnvError
from tests.support.releases import sorted_rows


def publish(root, tables, run_id, kind=None, parent=None):
    extra = {"kind": kind} if kind is not None else {}
    return publish_release(tables, data_root=str(root), run_id=run_id, parent=parent, config={"n": 1}, **extra)


def test_a_release_is_a_task_release_unless_told(tmp_path, tables):
    m = publish(tmp_path, {"tasks": tables["tasks"]}, "run-1")
    assert m.kind == "tasks" and latest_release(tmp_path) == m.release_id
    stored = json.loads((tmp_path / "releases" / m.release_id / "manifest.json").read_text())
    assert stored["kind"] == "tasks"
    # a manifest written before kinds existed reads as a task release
    del stored["kind"]
    assert Manifest.model_validate(stored).kind == "tasks"
    assert RELEASE_KINDS == ("tasks", "benchmark", "eval")


@pytest.mark.parametrize("kind", ["benchmark", "eval"])
def test_other_kinds_do_not_move_latest(tmp_path, tables, kind):
    assert publish(tmp_path, {"tasks": tables["tasks"].slice(0, 3)}, "bench-first", kind=kind).kind == kind
    assert latest_release(tmp_path) is None  # no task release yet: LATEST names none
    first = publish(tmp_path, tables, "run-1")
    other = publish(tmp_path, {"tasks": tables["tasks"].slice(0, 5)}, "bench-1", kind=kind, parent=first.release_id)
    assert latest_release(tmp_path) == first.release_id
    assert read_manifest(tmp_path, other.release_id).kind == kind
    assert read_table(tmp_path, other.release_id, "tasks").num_rows == 5
    assert read_table(tmp_path, "latest", "tasks").num_rows == tables["tasks"].num_rows
    # republishing it is a no-op that leaves LATEST alone too
    assert publish(tmp_path, {"tasks": tables["tasks"].slice(0, 5)}, "bench-1", kind=kind) == other
    assert latest_release(tmp_path) == first.release_id
    # the next task release moves LATEST, whatever was published in between
    second = publish(tmp_path, {"tasks": tables["tasks"].slice(1)}, "run-2", parent=latest_release(tmp_path))
    assert latest_release(tmp_path) == second.release_id and second.parent == first.release_id
    assert [(m.run_id, m.kind) for m in list_releases(tmp_path)] == [
        ("bench-first", kind),
        ("run-1", "tasks"),
        ("bench-1", kind),
        ("run-2", "tasks"),
    ]


def test_a_run_id_keeps_its_kind(tmp_path, tables):
    publish(tmp_path, {"tasks": tables["tasks"]}, "run-1")
    with pytest.raises(ReleaseConflict, match="already exists as a tasks release, not benchmark"):
        publish(tmp_path, {"tasks": tables["tasks"]}, "run-1", kind="benchmark")
    with pytest.raises(CoworkEnvError, match="unknown release kind 'suite'; kinds are: tasks, benchmark, eval"):
        publish(tmp_path, {"tasks": tables["tasks"]}, "run-9", kind="suite")
    assert len(list_releases(tmp_path)) == 1


def test_kinds_on_an_object_store(tables):
    url = f"memory://coworkenv-{uuid.uuid4().hex}/data"
    task = publish(url, {"tasks": tables["tasks"]}, "run-1")
    bench = publish(url, {"tasks": tables["tasks"].slice(0, 2)}, "bench-1", kind="benchmark")
    assert latest_release(url) == task.release_id
    assert sorted_rows(read_table(url, bench.release_id, "tasks")) == sorted_rows(tables["tasks"].slice(0, 2))
