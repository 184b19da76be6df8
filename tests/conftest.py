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
