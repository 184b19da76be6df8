"""Exports (hf, jsonl), the `releases`/`export` commands, `datasets` loading of the sft table, and docs/datasets.md."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import coworkenv.cli.data  # noqa: F401  (registers the commands)
from coworkenv.cli.app import app
from coworkenv.data.datasets_page import DEFAULT_PATH, render
from coworkenv.data.export import export_release
from coworkenv.data.publisher import publish_release
from coworkenv.data.reader import latest_release, read_table, table_files
from coworkenv.data.schemas import TABLES
from coworkenv.errors import CoworkEnvError
from tests.support import ROOT  # noqa: E402
from tests.support.releases import sorted_rows


@pytest.fixture(scope="module")
def data_root(tmp_path_factory, tables) -> Path:
    root = tmp_path_factory.mktemp("data")
    publish_release(tables, data_root=str(root), run_id="export-run", parent=None, config={"k": 1})
    return root


def test_export_jsonl(data_root, tables, tmp_path):
    manifest = export_release(data_root, "latest", tmp_path / "out", "jsonl")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted(
        [*(f"{n}.jsonl" for n in TABLES), "manifest.json"]
    )
    for name, table in tables.items():
        lines = (tmp_path / "out" / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
        assert len(lines) == table.num_rows == manifest.row_counts[name]
    row = json.loads((tmp_path / "out" / "sft.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert row["messages"][0]["role"] == "system" and isinstance(json.loads(row["tools"]), list)
    assert json.loads((tmp_path / "out" / "manifest.json").read_text())["release_id"] == manifest.release_id


def test_export_hf(data_root, tables, tmp_path):
    import datasets

    export_release(data_root, "latest", tmp_path / "hf", "hf", tables=["sft", "rl", "eval_results"])
    sft = datasets.load_from_disk(str(tmp_path / "hf" / "sft"))
    assert sft.num_rows == tables["sft"].num_rows
    assert sorted(sft.column_names) == sorted(TABLES["sft"].names)
    assert sft[0]["messages"][0]["role"] == "system"
    assert datasets.load_from_disk(str(tmp_path / "hf" / "eval_results")).num_rows == 0
    # the folder itself, as the README loads it: a DatasetDict with a split per exported table
    whole = datasets.load_from_disk(str(tmp_path / "hf"))
    assert isinstance(whole, datasets.DatasetDict) and sorted(whole) == ["eval_results", "rl", "sft"]
    assert whole["sft"].num_rows == tables["sft"].num_rows and whole["rl"].num_rows == tables["rl"].num_rows
    # and a second export over it with --overwrite (dataset_dict.json is part of an export, not a stray)
    export_release(data_root, "latest", tmp_path / "hf", "hf", tables=["sft"], overwrite=True)
    assert sorted(datasets.load_from_disk(str(tmp_path / "hf"))) == ["sft"]


def test_export_refuses_to_clobber(data_root, tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "keep.txt").write_text("x")
    with pytest.raises(CoworkEnvError, match="not empty"):
        export_release(data_root, "latest", tmp_path / "out", "jsonl")
    with pytest.raises(CoworkEnvError, match="not a previous export"):  # --overwrite replaces an export, nothing else
        export_release(data_root, "latest", tmp_path / "out", "jsonl", overwrite=True)
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["keep.txt"]
    (tmp_path / "out" / "keep.txt").unlink()
    export_release(data_root, "latest", tmp_path / "out", "hf", tables=["sft"])
    export_release(data_root, "latest", tmp_path / "out", "jsonl", tables=["rl"], overwrite=True)
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["manifest.json", "rl.jsonl"]
    with pytest.raises(CoworkEnvError, match="unknown export format"):
        export_release(data_root, "latest", tmp_path / "x", "csv")


@pytest.mark.parametrize("where", ["root", "release", "above"])
def test_overwrite_never_replaces_the_data_root_or_a_release(data_root, where):
    from coworkenv.data.reader import read_manifest

    release = Path(data_root) / "releases" / read_manifest(data_root, "latest").release_id
    out = {"root": Path(data_root), "release": release, "above": Path(data_root).parent}[where]
    before = sorted(str(p) for p in Path(data_root).rglob("*"))
    with pytest.raises(CoworkEnvError, match="data root"):
        export_release(data_root, "latest", out, "jsonl", overwrite=True)
    assert sorted(str(p) for p in Path(data_root).rglob("*")) == before
    command = [
        str(Path(sys.executable).parent / "coworkenv"),
        "export",
        "--release",
        "latest",
        "--out",
        ".",
        "--overwrite",
    ]
    command += ["--format", "jsonl", "--data-root", str(data_root)]
    result = subprocess.run(command, cwd=out, capture_output=True, text=True, timeout=120)  # `--out .`, as typed
    assert result.returncode == 2 and "refusing to replace it" in result.stderr and len(result.stderr.splitlines()) == 1
    assert sorted(str(p) for p in Path(data_root).rglob("*")) == before


def test_load_sft_with_datasets(data_root, tables, tmp_path):
    import datasets

    files = table_files(data_root, "latest", "sft")
    sft = datasets.load_dataset("parquet", data_files=files, split="train", cache_dir=str(tmp_path / "cache"))
    assert sft.num_rows == tables["sft"].num_rows
    message = sft[0]["messages"][2]
    assert message["role"] == "assistant" and isinstance(message["tool_calls"][0]["function"]["arguments"], str)
    assert sorted_rows(read_table(data_root, "latest", "sft")) == sorted(sft.to_list(), key=repr)


def test_cli_releases_and_export(data_root, tmp_path, monkeypatch):
    """Not a terminal (CliRunner): the table keeps every id whole; plain and json give them to programs."""
    runner = CliRunner()
    monkeypatch.delenv("COLUMNS", raising=False)  # a width asked for wins over the whole-values default
    release = latest_release(data_root)
    listed = runner.invoke(app, ["releases", "--data-root", str(data_root)])
    assert listed.exit_code == 0, listed.output
    assert release in listed.output and "tasks" in listed.output and "…" not in listed.output
    plain = runner.invoke(app, ["releases", "--data-root", str(data_root), "--format", "plain"]).output.splitlines()
    header = plain[0].split("\t")
    row = dict(zip(header, plain[1].split("\t"), strict=True))
    assert header[:5] == ["release", "kind", "latest", "created", "parent"] and (row["release"], row["latest"]) == (
        release,
        "yes",
    )
    (listed_json,) = json.loads(
        runner.invoke(app, ["releases", "--data-root", str(data_root), "--format", "json"]).output
    )
    assert (listed_json["release"], listed_json["latest"]) == (release, True)
    assert listed_json["tasks"] == read_table(data_root, release, "tasks").num_rows
    monkeypatch.setenv("COWORKENV_DATA_ROOT", str(data_root))
    done = runner.invoke(app, ["export", "--release", "latest", "--format", "jsonl", "--out", str(tmp_path / "j")])
    assert done.exit_code == 0, done.output
    assert "exported r-export-run-" in done.output and (tmp_path / "j" / "sft.jsonl").is_file()
    empty = runner.invoke(app, ["releases", "--data-root", str(tmp_path / "none")])
    assert empty.exit_code == 0 and "no releases" in empty.output


def test_cli_errors_are_one_line(tmp_path):
    cli = Path(sys.executable).parent / "coworkenv"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    done = subprocess.run(
        [
            str(cli),
            "export",
            "--release",
            "latest",
            "--format",
            "hf",
            "--out",
            str(tmp_path / "o"),
            "--data-root",
            str(tmp_path / "empty"),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [f"error: no release published under {tmp_path / 'empty'} yet"]


def test_datasets_doc_is_up_to_date():
    assert DEFAULT_PATH == ROOT / "docs" / "datasets.md"
    assert DEFAULT_PATH.read_text(encoding="utf-8") == render(), "run `python -m coworkenv.data.datasets_page`"
    for name, schema in TABLES.items():
        assert f"### `{name}`" in render()
        for field in schema:
            assert f"| `{field.name}` |" in render()
