"""Shared test setup: never reach a model hub; fixtures that several test folders use."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

for _key in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE"):
    os.environ.setdefault(_key, "1")


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The offline tiny model (`coworkenv model tiny`, seed 0), built once per test process; read-only (copy it to change it)."""
    from coworkenv.train.tiny import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("models") / "tiny", seed=0)


@pytest.fixture(scope="session")
def pipeline_root(tmp_path_factory: pytest.TempPathFactory):
    """A data root made by the real pipeline (`tests/support/pipeline_root.py`), built once per test process; read-only."""
    from tests.support.pipeline_root import build_pipeline_root

    return build_pipeline_root(tmp_path_factory.mktemp("pipeline") / "data")


@pytest.fixture(scope="session")
def smollm2_model(tmp_path_factory: pytest.TempPathFactory):
    """SmolLM2-135M-Instruct converted once per test process by the console script, `coworkenv model smollm2 --out
    <dir> --register smol` (about half a minute): (path, data root it was registered in, the command's output);
    read-only. Tests that use it carry `tests.support.gguf_files.needs_smollm2` (skipped without the wheel)."""
    from types import SimpleNamespace

    from tests.cli.test_eval_cli import cli as run_cli
    from tests.cli.test_eval_cli import ok

    base = tmp_path_factory.mktemp("smollm2")
    out = ok(run_cli("model", "smollm2", "--out", base / "smollm2", "--register", "smol", data_root=base / "data"))
    return SimpleNamespace(path=base / "smollm2", root=base / "data", out=out)
