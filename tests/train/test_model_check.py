"""The check every training job (and the model registry) makes of its model folder before any work: a folder that is
not a loadable checkpoint is one `error:` line with exit code 2, no traceback, and no checkpoint folder left behind."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from coworkenv.agents.hf import load_causal_lm
from coworkenv.errors import CoworkEnvError
from coworkenv.train.checkpoint import check_model_dir
from tests.cli.test_eval_cli import assert_one_line_error, cli


def folder(path: Path, config: str | None = '{"model_type": "qwen2"}', *files: str) -> Path:
    path.mkdir()
    if config is not None:
        (path / "config.json").write_text(config, encoding="utf-8")
    for name in files:
        (path / name).write_text("{}", encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("config", "files", "needle"),
    [
        (None, (), "no config.json"),
        ("{bad", (), "config.json: not valid JSON"),
        ("{}", (), "with a model_type"),
        ("[1]", (), "with a model_type"),
        ('{"model_type": ""}', (), "with a model_type"),
        ('{"model_type": "qwen2"}', ("tokenizer.json",), "no weights"),
        ('{"model_type": "qwen2"}', ("model.safetensors",), "no tokenizer"),
    ],
)
def test_a_folder_that_is_not_a_checkpoint_is_refused(tmp_path, config, files, needle):
    with pytest.raises(CoworkEnvError) as refused:
        check_model_dir(folder(tmp_path / "m", config, *files))
    assert needle in str(refused.value) and "\n" not in str(refused.value)


@pytest.mark.parametrize(
    "files",
    [
        ("model.safetensors", "tokenizer.json"),
        ("pytorch_model.bin", "tokenizer_config.json"),
        ("model.safetensors.index.json", "tokenizer.json"),
        ("pytorch_model.bin.index.json", "tokenizer_config.json"),
    ],
)
def test_the_weight_and_tokenizer_layouts_transformers_saves_pass(tmp_path, files):
    check_model_dir(folder(tmp_path / "m", '{"model_type": "qwen2"}', *files))


def test_files_that_pass_the_check_but_do_not_load_are_one_line(tiny_model_dir, tmp_path):
    broken = shutil.copytree(tiny_model_dir, tmp_path / "broken")
    (broken / "model.safetensors").write_bytes(b"")  # truncated weights
    check_model_dir(broken)
    with pytest.raises(CoworkEnvError, match=r"broken: cannot load a causal LM from it: ") as refused:
        load_causal_lm(broken, str(broken))
    assert "\n" not in str(refused.value)


@pytest.mark.parametrize(
    "job",
    [
        ["sft", "--max-steps", "1", "--use-cpu"],
        ["rl", "--max-steps", "1", "--use-cpu"],
        ["dpo", "--release", "eval-x", "--use-cpu"],
    ],
)
def test_every_train_job_refuses_a_folder_without_a_tokenizer_before_any_work(tmp_path, job):
    # the audit's folder: a config and weights, no tokenizer (transformers then tries to convert a slow tokenizer and
    # fails deep inside); the data root is empty, so the model folder is checked before the release or evaluation
    model = folder(tmp_path / "fakeckpt", json.dumps({"model_type": "qwen2"}), "model.safetensors")
    proc = cli("train", job[0], "--model", model, "--out", tmp_path / "out", *job[1:], data_root=tmp_path / "data")
    assert_one_line_error(proc, f"{model}: not a model checkpoint (no tokenizer")
    assert not (tmp_path / "out").exists()
